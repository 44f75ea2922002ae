// Package view is the contract between the console's root and the views it opens over the list panes:
// the Component every view implements, the ProgramContext they all read, the backend they read and act
// through, and the messages with which a view asks the root for something.
package view

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
)

// Component is one view of the console's body (a detail page, the full help, the health view, the log
// view, a dialog). The list panes are the base of the console; every view opened over them is kept on a
// stack. Keys, mouse events, the body and the help line belong to the view on top; every other message is
// delivered to each view on the stack, so a view below the top still receives its asynchronous results
// (a triage report, log lines) and must ignore what is not meant for it.
//
// Update returns the view to keep in its place: usually itself, another view to replace it (a step of a
// wizard), or nil to leave the stack (esc on a detail page, an answered dialog). Closing is synchronous,
// so a dialog never sees a second key after it answered. Views are pointers: the stack compares them to
// see whether Update replaced one.
//
// A view reads the shared *ProgramContext for sizes, styles, keys, flags and the backend, and asks the
// root for things with messages (Open, RunAction, Status, SelectNode; see requests.go). How to add one,
// with the files to touch: docs/architecture.md, "Adding a view".
//
// Optional behaviour is declared by implementing Refresher (the view re-checks what it shows when an
// action ends), Dialog (the view takes every key, ctrl+c included) or EscCancelsAction (esc cancels a
// running action before the view sees it).
type Component interface {
	Init() tea.Cmd
	Update(msg tea.Msg) (Component, tea.Cmd)
	View() string // exactly the size given by SetSize, or less (the root pads it)
	SetSize(width, height int)
	help.KeyMap
}

// Refresher is a view that shows state an action may change; the root calls Refresh when one ends.
type Refresher interface{ Refresh() tea.Cmd }

// Dialog is a view that gets every key, ctrl+c included, until it answers. Box is the dialog alone; the
// root draws it over what lies beneath, so the user still sees what the question is about.
type Dialog interface{ Box() string }

// EscCancelsAction is a view on which esc first cancels a running action (the health view, whose restart
// and reboot run while it is shown).
type EscCancelsAction interface{ EscCancelsAction() }

// OpenMsg asks the root to push a view; see Open.
type OpenMsg struct{ View Component }

// Open is the command a view returns to open another view over itself.
func Open(v Component) tea.Cmd { return func() tea.Msg { return OpenMsg{View: v} } }
