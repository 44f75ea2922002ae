// Package ui is wmcon's console: a Bubble Tea program that renders cluster snapshots in list panes
// (nodes, MachineSets, secrets, mirrors), opens views over them on a stack (see view.Component) and
// dispatches actions whose progress it shows inline. The views live in their own packages (ui/wizard,
// ui/doctor, ui/operator, ...); what they share is in ui/view.
package ui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/ui/keymap"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/theme"
	"github.com/wmcon/wmcon/ui/view"
)

type (
	// Options are the choices main makes when it starts the console (see view.Options).
	Options = view.Options
	// Backend is what the console reads and runs through (see view.Backend).
	Backend = view.Backend
)

// NewProgramContext builds, once, what the root and every view share: the options with their defaults,
// the theme, the styles, and the key map with the keys the backend and read-only allow turned on.
func NewProgramContext(opts Options) view.ProgramContext {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Tick == nil {
		opts.Tick = tea.Tick
	}
	if opts.MetricsInterval <= 0 {
		opts.MetricsInterval = 30 * time.Second
	}
	if opts.PodMetricsInterval <= 0 {
		opts.PodMetricsInterval = 30 * time.Second
	}
	th := theme.New(theme.Options{NoColor: opts.NoColor, ASCII: opts.ASCII, Profile: opts.Profile, Name: opts.Theme})
	ctx := view.ProgramContext{Options: opts, Theme: th, Styles: styles.New(th), Marks: th.Marks,
		Keys: keymap.New(paneTitles())}
	enableKeys(&ctx.Keys, &ctx)
	return ctx
}

// enableKeys turns on the keys whose backend the console has, and those that change something only when
// it may change things.
func enableKeys(k *keymap.Map, ctx *view.ProgramContext) {
	if ctx.CanChange() {
		k.EnableNodeActions()
	}
	k.Health.SetEnabled(ctx.Triage != nil)
	k.Logs.SetEnabled(ctx.Logs != nil)
	k.MirrorsReload.SetEnabled(ctx.Mirrors != nil)
	k.MirrorsApply.SetEnabled(ctx.Mirrors != nil && ctx.CanChange())
	for _, b := range []*key.Binding{&k.SetupNew, &k.SetupScale, &k.SetupDelete} {
		b.SetEnabled(ctx.CanChange())
	}
}
