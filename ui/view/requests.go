package view

import (
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
)

// What a view asks of the root, and what the root tells every view. A view returns these from Update as
// commands (Send); the root handles them (ui/app.go's handleRequest), so a view never reaches into the
// root or runs a change itself.
type (
	// RunAction asks the root to run a request at once in the action panel (a view's action that needs no
	// further confirmation, such as restarting a stopped service or a step of the guided setup).
	RunAction struct{ Req request.Request }
	// FormResult is the answer of a confirmation or a form: run Request when Confirmed.
	FormResult struct {
		Confirmed bool
		Request   request.Request
	}
	// SelectNode asks the root to show the Nodes pane with Node selected.
	SelectNode struct{ Node string }
	// Status asks the root to show a line in the status bar.
	Status struct{ Text string }
	// ActionFinished is broadcast to the views when an action ends (or is refused because another one
	// runs), so the view that asked for it knows how it went; the panel shows the details.
	ActionFinished struct {
		Req     request.Request
		Outcome event.Outcome
		Message string // the action's last word ("MachineSet x applied with 1 replicas")
		Detail  string // for an action that did not succeed: what happened and the hint, as the panel says
	}
)

// Send is a command that delivers msg, for the requests views send the root.
func Send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }
