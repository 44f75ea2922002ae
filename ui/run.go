package ui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/wmcon/wmcon/model"
)

// frameRate is how many times a second Bubble Tea looks for a changed frame to draw. It looks whether
// anything changed or not, and at its default 60 those wake-ups were most of what a console at rest costs
// (on 10,000 nodes, at rest: 0.97 % of a core at 60, 0.50 % at 30; the minute after the list, median of
// three: 1.18 % at 30, 1.02 % at 20). 20 still draws a keystroke's answer within a frame of 50 ms.
const frameRate = 20

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
		tea.WithColorProfile(opts.Profile), tea.WithFPS(frameRate))
	if _, err := program.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}
