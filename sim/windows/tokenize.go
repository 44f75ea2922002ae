package windows

import (
	"fmt"
	"strings"
	"unicode"
)

type tokenKind int

const (
	tokWord   tokenKind = iota // bare word: command names, parameters, numbers, $_.Name, +
	tokString                  // quoted literal; text is its value
	tokOp                      // ; | ( ) { } , @( @{
)

// token is one lexical element of a PowerShell command line. glued records that no whitespace
// separated it from the previous token, so binPath='x y' is one argument as PowerShell sees it.
type token struct {
	kind  tokenKind
	text  string
	glued bool
}

// parseError is what PowerShell's parser reports before running anything.
type parseError struct {
	pos int
	msg string
	id  string
}

func (e *parseError) Error() string { return e.msg }

// isSingleQuote reports PowerShell's single quotes: ' and the typographic ‘ ’ ‚ ‛.
func isSingleQuote(r rune) bool {
	switch r {
	case '\'', '\u2018', '\u2019', '\u201a', '\u201b':
		return true
	}
	return false
}

// isDoubleQuote reports PowerShell's double quotes: " and the typographic “ ” „.
func isDoubleQuote(r rune) bool {
	switch r {
	case '"', '\u201c', '\u201d', '\u201e':
		return true
	}
	return false
}

func isOpRune(r rune) bool { return strings.ContainsRune(";|(){},", r) }

// tokenize splits a command line into tokens, honouring PowerShell quoting. Inside a single-quoted
// literal a quote character followed by another quote character stands for the second one, exactly as
// PowerShell's tokenizer reads it; nothing else is special.
func tokenize(line string) ([]token, error) {
	rs := []rune(line)
	var toks []token
	glued := false
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			glued = false
			i++
			continue
		case r == '#' && !glued:
			return toks, nil // comment to the end of the line
		case isSingleQuote(r):
			val, next, err := scanSingle(rs, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokString, text: val, glued: glued})
			i = next
		case isDoubleQuote(r):
			val, next, err := scanDouble(rs, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokString, text: val, glued: glued})
			i = next
		case r == '@' && i+1 < len(rs) && (rs[i+1] == '(' || rs[i+1] == '{'):
			toks = append(toks, token{kind: tokOp, text: string(rs[i : i+2]), glued: glued})
			i += 2
		case isOpRune(r):
			toks = append(toks, token{kind: tokOp, text: string(r), glued: glued})
			i++
		default:
			start := i
			for i < len(rs) && !unicode.IsSpace(rs[i]) && !isOpRune(rs[i]) && !isSingleQuote(rs[i]) && !isDoubleQuote(rs[i]) {
				i++
			}
			toks = append(toks, token{kind: tokWord, text: string(rs[start:i]), glued: glued})
		}
		glued = true
	}
	return toks, nil
}

func scanSingle(rs []rune, start int) (string, int, error) {
	var sb strings.Builder
	for i := start + 1; i < len(rs); i++ {
		if isSingleQuote(rs[i]) {
			if i+1 < len(rs) && isSingleQuote(rs[i+1]) {
				sb.WriteRune(rs[i+1])
				i++
				continue
			}
			return sb.String(), i + 1, nil
		}
		sb.WriteRune(rs[i])
	}
	return "", 0, &parseError{pos: start, msg: "The string is missing the terminator: '.", id: "TerminatorExpectedAtEndOfString"}
}

// scanDouble reads a double-quoted string. The client never sends one; the simulator keeps its text
// literally apart from doubled quotes and backtick escapes, and refuses variables it cannot expand.
func scanDouble(rs []rune, start int) (string, int, error) {
	var sb strings.Builder
	for i := start + 1; i < len(rs); i++ {
		switch {
		case rs[i] == '`' && i+1 < len(rs):
			i++
			sb.WriteRune(rs[i])
		case isDoubleQuote(rs[i]):
			if i+1 < len(rs) && isDoubleQuote(rs[i+1]) {
				sb.WriteRune(rs[i+1])
				i++
				continue
			}
			return sb.String(), i + 1, nil
		case rs[i] == '$':
			return "", 0, &parseError{pos: i, msg: "winsim does not expand variables in double-quoted strings; send a single-quoted literal.", id: "SimulatorUnsupported"}
		default:
			sb.WriteRune(rs[i])
		}
	}
	return "", 0, &parseError{pos: start, msg: `The string is missing the terminator: ".`, id: "TerminatorExpectedAtEndOfString"}
}

// splitTop splits tokens at a top-level operator (";" or "|"), ignoring ones nested in (), @(), {} or @{}.
func splitTop(toks []token, sep string) ([][]token, error) {
	var parts [][]token
	depth, start := 0, 0
	for i, t := range toks {
		if t.kind != tokOp {
			continue
		}
		switch t.text {
		case "(", "@(", "{", "@{":
			depth++
		case ")", "}":
			depth--
			if depth < 0 {
				return nil, &parseError{msg: fmt.Sprintf("Unexpected token '%s' in expression or statement.", t.text), id: "UnexpectedToken"}
			}
		case sep:
			if depth == 0 {
				parts = append(parts, toks[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, &parseError{msg: "Missing closing ')' or '}' in expression.", id: "MissingEndParenthesisInExpression"}
	}
	return append(parts, toks[start:]), nil
}

// matchClose returns the index of the token closing the group opened at open.
func matchClose(toks []token, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		if toks[i].kind != tokOp {
			continue
		}
		switch toks[i].text {
		case "(", "@(", "{", "@{":
			depth++
		case ")", "}":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// parseScript splits a command line into statements, each a pipeline of commands.
func parseScript(line string) ([][][]token, error) {
	toks, err := tokenize(line)
	if err != nil {
		return nil, err
	}
	stmts, err := splitTop(toks, ";")
	if err != nil {
		return nil, err
	}
	var script [][][]token
	for _, s := range stmts {
		if len(s) == 0 {
			continue
		}
		pipe, err := splitTop(s, "|")
		if err != nil {
			return nil, err
		}
		for _, el := range pipe {
			if len(el) == 0 {
				return nil, &parseError{msg: "An empty pipe element is not allowed.", id: "EmptyPipeElement"}
			}
		}
		script = append(script, pipe)
	}
	return script, nil
}

// nativeArgs turns the tokens after a native program's name into its argv, joining glued parts
// (binPath='C:\k\x.exe --v' is the single argument binPath=C:\k\x.exe --v).
func nativeArgs(toks []token) ([]string, error) {
	var args []string
	for i, t := range toks {
		if t.kind == tokOp {
			return nil, fmt.Errorf("unexpected %q in a native command's arguments", t.text)
		}
		if t.glued && i > 0 {
			args[len(args)-1] += t.text
			continue
		}
		args = append(args, t.text)
	}
	return args, nil
}

// quoteLiteral is the inverse of scanSingle: the PowerShell single-quoted literal of s.
func quoteLiteral(s string) string {
	var sb strings.Builder
	sb.WriteByte('\'')
	for _, r := range s {
		if isSingleQuote(r) {
			sb.WriteRune(r)
		}
		sb.WriteRune(r)
	}
	sb.WriteByte('\'')
	return sb.String()
}
