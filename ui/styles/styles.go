// Package styles holds the console's styles, every one built once from the theme.
package styles

import (
	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/ui/theme"
)

// Styles are every style the list panes, the detail pages, the action panel and the dialogs use, built
// once from the console's theme.
type Styles struct {
	NoColor bool

	Title      lipgloss.Style
	HeaderKey  lipgloss.Style
	HeaderText lipgloss.Style
	Banner     lipgloss.Style // connection lost
	TabActive  lipgloss.Style
	TabIdle    lipgloss.Style

	ColumnHeader lipgloss.Style
	Selected     lipgloss.Style
	Cell         lipgloss.Style
	Match        lipgloss.Style
	Muted        lipgloss.Style
	Good         lipgloss.Style
	Warn         lipgloss.Style
	Bad          lipgloss.Style
	Notice       lipgloss.Style // pane-level messages (not available, forbidden, loading)

	DetailTitle lipgloss.Style
	DetailKey   lipgloss.Style

	PanelBorder lipgloss.Style // action panel and dialogs
	HelpKey     lipgloss.Style
	HelpDesc    lipgloss.Style
}

// New builds the styles from the theme; without colour only attributes (bold, reverse, underline)
// remain, so selection and matches stay visible on NO_COLOR terminals.
func New(t *theme.Theme) Styles {
	base := lipgloss.NewStyle()
	return Styles{
		NoColor:      t.NoColor,
		Title:        t.Title,
		HeaderKey:    t.Muted,
		HeaderText:   base,
		Banner:       t.Bad,
		TabActive:    t.Title,
		TabIdle:      t.Muted,
		ColumnHeader: t.Header,
		Selected:     t.Selected,
		Cell:         base,
		Match:        t.Match,
		Muted:        t.Muted,
		Good:         t.Good,
		Warn:         t.Warn,
		Bad:          t.Bad,
		Notice:       t.Notice,
		DetailTitle:  t.Title,
		DetailKey:    t.Fg(base.Bold(true), t.Palette.Muted),
		PanelBorder:  t.Fg(base.Border(lipgloss.RoundedBorder()), t.Palette.Muted),
		HelpKey:      t.Title,
		HelpDesc:     t.Muted,
	}
}
