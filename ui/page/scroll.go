package page

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/ui/keymap"
)

// Scroll does what every scrolling page does alike with its viewport: the Top and Bottom keys, and the
// mouse wheel three lines a notch. It reports whether msg was one of them.
func Scroll(vp *viewport.Model, keys keymap.Map, msg tea.Msg) bool {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, keys.Top):
			vp.GotoTop()
		case key.Matches(msg, keys.Bottom):
			vp.GotoBottom()
		default:
			return false
		}
		return true
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			vp.ScrollUp(3)
		case tea.MouseWheelDown:
			vp.ScrollDown(3)
		}
		return true
	}
	return false
}
