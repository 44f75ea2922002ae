package ui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/wmcon/wmcon/model"
)

// Run shows the console until the user quits or ctx is cancelled. snapshots is the watcher's stream; the
// console shows "connecting…" until the first one arrives.
func Run(ctx context.Context, snapshots <-chan *model.Snapshot, opts Options) error {
	if opts.Profile == colorprofile.Unknown {
		// What Bubble Tea renders to is os.Stdout, whose profile lipgloss detected at package init. Detecting
		// again (here, and in Bubble Tea when not told) costs a `tmux info` each time inside tmux: ~20–60 ms
		// apiece before the first screen.
		opts.Profile = lipgloss.Writer.Profile
	}
	program := tea.NewProgram(New(NewProgramContext(opts), snapshots), tea.WithContext(ctx),
		tea.WithColorProfile(opts.Profile))
	if _, err := program.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}
