// Package binding holds what the console's key maps share: how a binding with its help is made, and the
// rule that help lists only the bindings that work right now.
package binding

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
)

// New is a binding of keys, shown in help as "help desc".
func New(help, desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

// Enabled keeps the enabled bindings, in order: a disabled binding neither matches nor shows in help.
func Enabled(bs ...key.Binding) []key.Binding {
	var out []key.Binding
	for _, b := range bs {
		if b.Enabled() {
			out = append(out, b)
		}
	}
	return out
}

// CommandKey is a console key that does what a headless command does: pressing Key does Command
// ("wmcon uncordon win-a", no "run") on the node the screen is about.
type CommandKey struct {
	Command string
	Key     string // "u", or a short phrase ("R, then tick disable eviction")
}

// WithKeys adds "press KEY or " before each "run COMMAND" of text (actions name what to do as headless
// commands, see event.Run) whose command one of keys does. The command must end there: one followed by
// more of a name or by flags ("run wmcon reboot win-a --on-pdb …") is another command, and gets no key
// unless keys name it too. The caller passes only the keys that work now, so a read-only console or a
// key that acts on another node adds nothing.
func WithKeys(text string, keys ...CommandKey) string {
	for _, k := range keys {
		if k.Command == "" || k.Key == "" {
			continue
		}
		run := "run " + k.Command
		var b strings.Builder
		rest := text
		for {
			i := strings.Index(rest, run)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(run)
			b.WriteString(rest[:i])
			if commandEnds(rest[end:]) {
				b.WriteString("press " + k.Key + " or ")
			}
			b.WriteString(run)
			rest = rest[end:]
		}
		text = b.String()
	}
	return text
}

// commandEnds reports whether a command is complete before rest: rest starts with neither more of a
// word nor a flag.
func commandEnds(rest string) bool {
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.:/", r) && !endsSentence(rest) {
		return false
	}
	return !strings.HasPrefix(rest, " -")
}

// endsSentence: a full stop or colon that ends a sentence ("run wmcon uncordon win-a.") rather than
// continuing a name ("win-a.example.com").
func endsSentence(rest string) bool {
	return len(rest) == 1 || rest[1] == ' '
}
