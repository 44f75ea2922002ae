package view

import (
	"charm.land/bubbles/v2/key"

	"github.com/wmcon/wmcon/model"
)

// A Launcher opens a view from the list with a key. A view's package exports its Launcher and the root
// lists it (ui/launcher.go); its key then works in the list and is listed in help whenever Available says
// so. Choose a key the list does not use already (see keymap.Map).
type Launcher struct {
	Key       key.Binding
	Available func(ctx *ProgramContext) bool // nil: always; e.g. "the backend provides what the view needs"
	Open      func(ctx *ProgramContext, at Selection) Component
	// Quiet keeps the key out of the one-line help (where it would push the pane's own keys off a narrow
	// terminal); the full help (?) lists it all the same.
	Quiet bool
}

// Selection is what the list shows when a launcher's key is pressed.
type Selection struct {
	Snap *model.Snapshot // nil before the first snapshot
	Pane string          // the active pane's title
	Key  string          // the selected row's key ("" when none); a node's name in the Nodes pane
}

// Works says whether the launcher's view can open in this console.
func (l Launcher) Works(ctx *ProgramContext) bool { return l.Available == nil || l.Available(ctx) }
