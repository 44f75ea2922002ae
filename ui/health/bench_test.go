package health_test

import (
	"testing"

	"github.com/wmcon/wmcon/ui/health"
	"github.com/wmcon/wmcon/ui/theme"
)

// BenchmarkView renders the fixture report with the likeliest cause expanded, as after each key press.
func BenchmarkView(b *testing.B) {
	m := health.New(health.Options{Node: "win-a", Theme: theme.New(theme.Options{Getenv: func(string) string { return "" }})})
	m.SetSize(120, 40)
	m, _ = m.Update(health.ReportMsg{Node: "win-a", Report: fixtureReport()})
	for b.Loop() {
		if m.View() == "" {
			b.Fatal("empty view")
		}
	}
}
