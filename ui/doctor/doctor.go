// Package doctor is the console's Doctor view (D): the prerequisite doctor's report on the cluster,
// shown with the health view's component.
package doctor

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/health"
	"github.com/wmcon/wmcon/ui/view"
)

// Launcher opens the view with D when the backend has the doctor.
var Launcher = view.Launcher{
	Key:       binding.New("D", "doctor", "D"),
	Available: func(ctx *view.ProgramContext) bool { return ctx.Doctor != nil },
	Open:      func(ctx *view.ProgramContext, _ view.Selection) view.Component { return New(ctx) },
}

// View shows the prerequisite doctor's report with the health view's component (checks with their
// marks, failing first, details expandable; g checks again, esc closes).
type View struct {
	ctx    *view.ProgramContext
	report health.Model
}

// New is the view; its Init runs the doctor.
func New(ctx *view.ProgramContext) *View {
	h := health.New(health.Options{Node: health.DoctorSubject, Theme: ctx.Theme, ReadOnly: ctx.ReadOnly, Cluster: true})
	return &View{ctx: ctx, report: h}
}

func (v *View) Init() tea.Cmd             { return v.report.Init() }
func (v *View) SetSize(w, h int)          { v.report.SetSize(w, h) }
func (v *View) View() string              { return v.report.View() }
func (v *View) ShortHelp() []key.Binding  { return v.report.ShortHelp() }
func (v *View) FullHelp() [][]key.Binding { return v.report.FullHelp() }

// Refresh checks again after an action ended (installing the operator or a key changes the findings).
func (v *View) Refresh() tea.Cmd { return v.report.Refresh() }

// Report is the last report, and whether there is one; Loading says a check is under way.
func (v *View) Report() (diagnosis.Report, bool) { return v.report.Report() }
func (v *View) Loading() bool                    { return v.report.Loading() }

func (v *View) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case health.Refresh:
		if msg.Node == health.DoctorSubject {
			return v, health.Load(context.Background(), msg.Node, func(ctx context.Context, _ string) (diagnosis.Report, error) {
				return v.ctx.Doctor(ctx)
			})
		}
	case health.Close:
		if msg.Node == health.DoctorSubject {
			return nil, nil
		}
	case health.RestartService, health.Reboot, health.OpenLogs:
		// not offered for a cluster report
	default:
		var cmd tea.Cmd
		v.report, cmd = v.report.Update(msg)
		return v, cmd
	}
	return v, nil
}
