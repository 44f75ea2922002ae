package ui

import (
	"context"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/wmcon/wmcon/model"
)

// Run shows the console until the user quits or ctx is cancelled. snapshots is the watcher's stream; the
// console shows "connecting…" until the first one arrives.
func Run(ctx context.Context, snapshots <-chan *model.Snapshot, opts Options) error {
	if opts.Profile == colorprofile.Unknown {
		opts.Profile = colorprofile.Detect(os.Stdout, os.Environ()) // what Bubble Tea renders to
	}
	program := tea.NewProgram(New(NewProgramContext(opts), snapshots), tea.WithContext(ctx))
	if _, err := program.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}
