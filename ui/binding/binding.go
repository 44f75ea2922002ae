// Package binding holds what the console's key maps share: how a binding with its help is made, and the
// rule that help lists only the bindings that work right now.
package binding

import "charm.land/bubbles/v2/key"

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
