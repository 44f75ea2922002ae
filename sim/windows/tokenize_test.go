package windows

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestTokenizeQuoting(t *testing.T) {
	cases := []struct {
		name, line string
		want       []token
	}{
		{"doubled apostrophe", `Test-Path -LiteralPath 'C:\it''s'`, []token{{tokWord, "Test-Path", false}, {tokWord, "-LiteralPath", false}, {tokString, `C:\it's`, false}}},
		{"typographic quotes doubled", "'a’’b‘‘c‚‚d‛‛e'", []token{{tokString, "a’b‘c‚d‛e", false}}},
		{"mixed pair keeps the second", "'x'’y'", []token{{tokString, "x’y", false}}},
		{"typographic opener and closer", "’abc‘", []token{{tokString, "abc", false}}},
		{"glued native argument", `sc.exe create k binPath='C:\k\a b.exe' start=auto`, []token{
			{tokWord, "sc.exe", false}, {tokWord, "create", false}, {tokWord, "k", false},
			{tokWord, "binPath=", false}, {tokString, `C:\k\a b.exe`, true}, {tokWord, "start=auto", false}}},
		{"separators inside a literal are text", `'a;b|c(d)'`, []token{{tokString, "a;b|c(d)", false}}},
		{"operators", `@(x).Count; y | z`, []token{{tokOp, "@(", false}, {tokWord, "x", true}, {tokOp, ")", true},
			{tokWord, ".Count", true}, {tokOp, ";", true}, {tokWord, "y", false}, {tokOp, "|", false}, {tokWord, "z", false}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := tokenize(c.line)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestTokenizeUnterminated(t *testing.T) {
	for _, line := range []string{`'abc`, `'it's'`, `Test-Path -LiteralPath 'C:\a’’`} {
		_, err := tokenize(line)
		require.Error(t, err, line)
	}
}

func TestParseScriptNesting(t *testing.T) {
	script, err := parseScript(`Get-WinEvent -FilterHashtable @{LogName='System'; ProviderName='x'} | ForEach-Object { $_.A + ';' }; hostname`)
	require.NoError(t, err)
	require.Len(t, script, 2, "the ; inside @{} is not a statement separator")
	require.Len(t, script[0], 2)
}

// FuzzTokenize: the tokenizer never panics, and a literal made by doubling quotes (remote.Quote's
// rule) reads back as the original value, whatever it contains.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "plain", "it's", "a’b", "‘‚‛’'", "x; y | z", `C:\k\a b`, "$_.Name", "'unterminated", "@{a='b'}", "\x00\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = tokenize(s)
		_, _ = parseScript(s)
		if !utf8.ValidString(s) {
			return
		}
		toks, err := tokenize("Test-Path -LiteralPath " + quoteLiteral(s))
		if err != nil {
			t.Fatalf("quoted %q does not tokenize: %v", s, err)
		}
		if len(toks) != 3 || toks[2].kind != tokString || toks[2].text != s {
			t.Fatalf("quoted %q read back as %#v", s, toks)
		}
	})
}
