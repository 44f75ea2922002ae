package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestComputeLayout(t *testing.T) {
	cases := []struct {
		name          string
		w, h          int
		panel         bool
		body, action  Rect
		status, help_ Rect
		tooSmall      bool
	}{
		{name: "standard", w: 120, h: 40, body: Rect{0, 4, 120, 34}, status: Rect{0, 38, 120, 1}, help_: Rect{0, 39, 120, 1}},
		{name: "panel below", w: 120, h: 40, panel: true, body: Rect{0, 4, 120, 22}, action: Rect{0, 26, 120, 12},
			status: Rect{0, 38, 120, 1}, help_: Rect{0, 39, 120, 1}},
		{name: "short panel below", w: 80, h: 20, panel: true, body: Rect{0, 4, 80, 7}, action: Rect{0, 11, 80, 7},
			status: Rect{0, 18, 80, 1}, help_: Rect{0, 19, 80, 1}},
		{name: "panel beside", w: 200, h: 50, panel: true, body: Rect{0, 4, 120, 44}, action: Rect{120, 4, 80, 44},
			status: Rect{0, 48, 200, 1}, help_: Rect{0, 49, 200, 1}},
		{name: "minimum", w: MinWidth, h: MinHeight, body: Rect{0, 4, 60, 6}, status: Rect{0, 10, 60, 1}, help_: Rect{0, 11, 60, 1}},
		{name: "too narrow", w: MinWidth - 1, h: 40, tooSmall: true},
		{name: "too short", w: 120, h: MinHeight - 1, tooSmall: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := Compute(c.w, c.h, c.panel)
			require.Equal(t, c.tooSmall, l.TooSmall)
			if c.tooSmall {
				return
			}
			assert.Equal(t, Rect{0, 0, c.w, 3}, l.Header)
			assert.Equal(t, Rect{0, 3, c.w, 1}, l.Tabs)
			assert.Equal(t, c.body, l.Body)
			assert.Equal(t, c.action, l.Action)
			assert.Equal(t, c.status, l.Status)
			assert.Equal(t, c.help_, l.Help)
			// every line of the screen belongs to exactly one region
			used := l.Header.H + l.Tabs.H + l.Body.H + l.Status.H + l.Help.H
			if l.Action.X == 0 {
				used += l.Action.H
			}
			assert.Equal(t, c.h, used)
		})
	}
}
