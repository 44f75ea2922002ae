package ui

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/health"
)

// DoctorFunc checks the cluster's prerequisites for Windows nodes (actions.Doctor with the session's clients).
type DoctorFunc func(ctx context.Context) (diagnosis.Report, error)

func init() {
	registerLauncher(launcher{
		Key:       binding.New("D", "doctor", "D"),
		Available: func(ctx *ProgramContext) bool { return ctx.Doctor != nil },
		Open:      func(ctx *ProgramContext, _ Selection) Component { return newDoctorView(ctx) },
	})
}

// doctorView shows the prerequisite doctor's report with the health view's component (checks with their
// marks, failing first, details expandable; g checks again, esc closes).
type doctorView struct {
	ctx    *ProgramContext
	report health.Model
}

func newDoctorView(ctx *ProgramContext) *doctorView {
	h := health.New(health.Options{Node: health.DoctorSubject, Theme: ctx.Theme, ReadOnly: ctx.ReadOnly, Cluster: true})
	return &doctorView{ctx: ctx, report: h}
}

func (v *doctorView) Init() tea.Cmd             { return v.report.Init() }
func (v *doctorView) SetSize(w, h int)          { v.report.SetSize(w, h) }
func (v *doctorView) View() string              { return v.report.View() }
func (v *doctorView) ShortHelp() []key.Binding  { return v.report.ShortHelp() }
func (v *doctorView) FullHelp() [][]key.Binding { return v.report.FullHelp() }

// Refresh checks again after an action ended (installing the operator or a key changes the findings).
func (v *doctorView) Refresh() tea.Cmd { return v.report.Refresh() }

func (v *doctorView) Update(msg tea.Msg) (Component, tea.Cmd) {
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
