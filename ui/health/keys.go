package health

import (
	"charm.land/bubbles/v2/key"

	"github.com/wmcon/wmcon/ui/binding"
)

// KeyMap holds the health view's bindings.
type KeyMap struct {
	Up, Down, Toggle                      key.Binding
	Restart, Logs, Reboot, Refresh, Close key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	b := binding.New
	return KeyMap{
		Up:      b("↑/k", "up", "up", "k"),
		Down:    b("↓/j", "down", "down", "j"),
		Toggle:  b("enter/space", "details", "enter", "space"),
		Restart: b("r", "restart service", "r"),
		Logs:    b("l", "tail log", "l"),
		Reboot:  b("R", "reboot node", "R"),
		Refresh: b("g", "check again", "g"),
		Close:   b("esc", "close", "esc"),
	}
}

func (k KeyMap) short() []key.Binding {
	return []key.Binding{k.Toggle, k.Restart, k.Logs, k.Reboot, k.Refresh, k.Close}
}

func (k KeyMap) full() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Toggle}, {k.Restart, k.Logs, k.Reboot}, {k.Refresh, k.Close}}
}
