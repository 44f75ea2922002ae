package health

import (
	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/ui/theme"
)

// Styles are the health view's styles, built once from the console's theme so the view matches the panes.
type Styles struct {
	Title    lipgloss.Style
	Muted    lipgloss.Style
	Fail     lipgloss.Style
	Warn     lipgloss.Style
	Unknown  lipgloss.Style
	OK       lipgloss.Style
	Selected lipgloss.Style
	Fix      lipgloss.Style
	Notice   lipgloss.Style
}

// NewStyles builds the styles; without colour only attributes remain, so the selection stays visible.
func NewStyles(t *theme.Theme) Styles {
	return Styles{
		Title:    t.Title,
		Muted:    t.Muted,
		Fail:     t.Bad,
		Warn:     t.Warn,
		Unknown:  t.Muted,
		OK:       t.Good,
		Selected: t.Selected,
		Fix:      t.Title,
		Notice:   t.Notice,
	}
}
