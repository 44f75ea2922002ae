package remote

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// psSingleQuotes are the characters PowerShell's tokenizer treats as a single quote.
func psIsSingleQuote(r rune) bool {
	switch r {
	case '\'', '\u2018', '\u2019', '\u201a', '\u201b':
		return true
	}
	return false
}

// psReadSingleQuoted implements PowerShell's rule for a single-quoted literal starting at line[0]: a quote
// character ends it unless another quote character follows, in which case the pair stands for the second.
// It returns the literal's value and the byte offset just after its closing quote, or ok=false when the
// literal never ends.
func psReadSingleQuoted(line string) (value string, end int, ok bool) {
	r, w := utf8.DecodeRuneInString(line)
	if !psIsSingleQuote(r) {
		return "", 0, false
	}
	var sb strings.Builder
	for i := w; i < len(line); {
		r, w := utf8.DecodeRuneInString(line[i:])
		if psIsSingleQuote(r) {
			r2, w2 := utf8.DecodeRuneInString(line[i+w:])
			if i+w < len(line) && psIsSingleQuote(r2) {
				sb.WriteString(line[i+w : i+w+w2])
				i += w + w2
				continue
			}
			return sb.String(), i + w, true
		}
		sb.WriteString(line[i : i+w])
		i += w
	}
	return "", 0, false
}

func TestQuoteExamples(t *testing.T) {
	cases := map[string]string{
		``:                     `''`,
		`C:\k\kubelet.exe`:     `'C:\k\kubelet.exe'`,
		`it's`:                 `'it''s'`,
		"a\u2019b":             "'a\u2019\u2019b'",
		`$env:PATH; rm -r C:\`: `'$env:PATH; rm -r C:\'`,
		"\u2018\u201a\u201b'":  "'\u2018\u2018\u201a\u201a\u201b\u201b'''",
		"x`\"y":                "'x`\"y'",
	}
	for in, want := range cases {
		assert.Equal(t, want, Quote(in), "Quote(%q)", in)
		got, end, ok := psReadSingleQuoted(want)
		require.True(t, ok)
		assert.Equal(t, in, got)
		assert.Equal(t, len(want), end)
	}
}

// FuzzQuoteNeverEscapes proves that whatever the value, the quoted literal is read back as exactly that
// value and ends exactly where Quote's output ends, so what follows it is never part of the value and
// nothing in the value can become code.
func FuzzQuoteNeverEscapes(f *testing.F) {
	for _, seed := range []string{"", "'", "''", "'; Remove-Item C:\\ -Recurse; '", "\u2019", "\u2018'\u201b", "a\x00b", "\xff'", "$(calc)", "`n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		line := q + "; Evil-Command 'x'"
		got, end, ok := psReadSingleQuoted(line)
		if !ok || end != len(q) || got != s {
			t.Fatalf("Quote(%q) = %q read back as %q ending at %d (ok=%v), want it to end at %d", s, q, got, end, ok, len(q))
		}
	})
}

func TestValidateServiceName(t *testing.T) {
	for _, ok := range []string{"kubelet", "windows_exporter", "hybrid-overlay-node", "a.b"} {
		assert.NoError(t, ValidateServiceName(ok))
	}
	for _, bad := range []string{"", "a b", "x;y", "x'", strings.Repeat("a", 257), "kube\"let", "é"} {
		assert.Error(t, ValidateServiceName(bad), bad)
	}
}

func TestValidateIPv4(t *testing.T) {
	assert.NoError(t, ValidateIPv4("127.0.0.1"))
	for _, bad := range []string{"", "127.0.0", "::1", "127.0.0.1; calc", "host.example", "127.0.0.256"} {
		assert.Error(t, ValidateIPv4(bad), bad)
	}
}
