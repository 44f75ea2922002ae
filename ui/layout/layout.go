// Package layout places the console's regions on the screen and fits text into them: the geometry is a
// pure function of the terminal size, and every region is drawn exactly to its size, so regions never push
// each other around.
package layout

// Rect is a region of the screen in cells.
type Rect struct{ X, Y, W, H int }

// Layout places the regions of the screen. It is a pure function of the terminal size and of whether the
// action panel is open, so resizing is only a recomputation and the geometry is unit-tested.
type Layout struct {
	TooSmall bool
	Header   Rect // cluster identity, plus the connection banner line
	Tabs     Rect
	Body     Rect // the list, a detail view or the full help
	Action   Rect // the action panel; zero when closed
	Status   Rect // filter prompt or transient messages
	Help     Rect // short help line
}

// Sizes below which the console asks for a bigger terminal instead of drawing garbage.
const (
	MinWidth  = 60
	MinHeight = 12

	headerHeight = 3 // two lines of identity and one for the banner (blank while connected)
	// At this width the action panel goes beside the list instead of under it: the list keeps about 110
	// columns, enough for the node table without cutting names.
	sideBySideWidth = 180
	actionPanelMaxH = 12
)

// Compute splits width×height into regions.
func Compute(width, height int, actionPanelOpen bool) Layout {
	if width < MinWidth || height < MinHeight {
		return Layout{TooSmall: true}
	}
	l := Layout{
		Header: Rect{0, 0, width, headerHeight},
		Tabs:   Rect{0, headerHeight, width, 1},
		Status: Rect{0, height - 2, width, 1},
		Help:   Rect{0, height - 1, width, 1},
	}
	bodyY := headerHeight + 1
	bodyH := height - bodyY - 2
	l.Body = Rect{0, bodyY, width, bodyH}
	if !actionPanelOpen {
		return l
	}
	if width >= sideBySideWidth {
		panelW := width * 2 / 5
		l.Body.W = width - panelW
		l.Action = Rect{l.Body.W, bodyY, panelW, bodyH}
		return l
	}
	panelH := min(actionPanelMaxH, bodyH/2)
	l.Body.H = bodyH - panelH
	l.Action = Rect{0, bodyY + l.Body.H, width, panelH}
	return l
}
