// Package cmdline writes the wmcon command lines that hints, plans and errors tell the user to run. Every
// value in them (a node name, an address, a user, a path) can come from the user or the cluster, so each is
// quoted for a POSIX shell: pasted as shown, the command gets exactly those arguments and nothing else.
package cmdline

import "strings"

// Wmcon is the command line "wmcon ARGS…", each argument quoted for a POSIX shell when it needs it.
func Wmcon(args ...string) string {
	if len(args) == 0 {
		return "wmcon"
	}
	return "wmcon " + Join(args...)
}

// Join is the words quoted (Quote) and separated by spaces: part of a command line.
func Join(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = Quote(w)
	}
	return strings.Join(quoted, " ")
}

// Quote makes s one word for a POSIX shell. A word of only characters no shell treats specially is
// left as it is, so common hints stay readable ("wmcon uncordon ip-127-0-0-5"); any other is put in
// single quotes, inside which a shell interprets nothing; a quote in s ends them, is written escaped
// (\') and they start again.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, needsQuotes) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// needsQuotes is true for a character outside the set every POSIX shell takes literally in a word.
func needsQuotes(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune("@%+=:,./_-", r)
}
