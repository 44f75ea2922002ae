package layout

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// TextWidth is the display width of plain text, with a fast path for ASCII (most cluster names).
func TextWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// Truncate cuts plain text to width cells, ending it with tail when it was cut.
func Truncate(s string, width int, tail string) string {
	if TextWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, max(0, width), tail)
}

// PadRight pads plain text with spaces to width cells.
func PadRight(s string, width int) string {
	if w := TextWidth(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

// FitLine cuts or pads a styled line to exactly width cells.
func FitLine(s string, width int) string {
	return FitLineStyled(s, width, lipgloss.NewStyle())
}

// FitLineStyled is FitLine with the padding drawn in pad (a selected row's highlight runs to the edge).
func FitLineStyled(s string, width int, pad lipgloss.Style) string {
	return fitMeasured(s, lipgloss.Width(s), width, pad)
}

// fitMeasured is FitLineStyled for a line s already measured w cells wide.
func fitMeasured(s string, w, width int, pad lipgloss.Style) string {
	if w > width {
		return ansi.Truncate(s, width, "")
	}
	if w < width {
		return s + Render(pad, strings.Repeat(" ", width-w))
	}
	return s
}

// Render styles s, leaving empty text alone (lipgloss would emit a pair of escape codes around nothing).
func Render(style lipgloss.Style, s string) string {
	if s == "" {
		return ""
	}
	return style.Render(s)
}

// FitBox pads or cuts s to exactly w×h cells so regions never push each other around.
func FitBox(s string, w, h int) string {
	lines := boxLines(s, h)
	for i := range lines {
		lines[i] = FitLine(lines[i], w)
	}
	return strings.Join(lines, "\n")
}

// boxLines is s's lines, cut or padded with empty lines to h.
func boxLines(s string, h int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}

// PlaceInBox centres s in a w×h box (used for dialogs over the body).
func PlaceInBox(s string, w, h int) string {
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, s)
}

// Overlay draws box centred over under (both at most w × h) and returns exactly w × h.
func Overlay(under, box string, w, h int) string {
	bw, bh := lipgloss.Width(box), lipgloss.Height(box)
	layers := lipgloss.NewCompositor(lipgloss.NewLayer(under),
		lipgloss.NewLayer(box).X(max(0, (w-bw)/2)).Y(max(0, (h-bh)/2)).Z(1))
	return FitBox(lipgloss.NewCanvas(w, h).Compose(layers).Render(), w, h)
}

// Wrap wraps each (possibly styled) line at width.
func Wrap(lines []string, width int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(wrapWords(l, width), "\n")...)
	}
	return out
}

// WrapIndented wraps each line at width, continuing an indented line at its indent (plus two for a
// bullet or a cursor) so evidence and choices stay readable when they wrap.
func WrapIndented(lines []string, width int) []string {
	var out []string
	for _, l := range lines {
		plain := ansi.Strip(l)
		indent := len(plain) - len(strings.TrimLeft(plain, " "))
		if rest := strings.TrimLeft(plain, " "); indent > 0 || strings.HasPrefix(rest, "▶ ") || strings.HasPrefix(rest, "> ") {
			if r := []rune(rest); len(r) > 1 && r[1] == ' ' && !unicode.IsLetter(r[0]) {
				indent += 2
			}
		}
		indent = min(indent, width/2)
		parts := strings.Split(wrapWords(l, width), "\n")
		out = append(out, parts[0])
		if len(parts) > 1 {
			rest := strings.Join(parts[1:], " ")
			for _, p := range strings.Split(wrapWords(rest, width-indent), "\n") {
				out = append(out, strings.Repeat(" ", indent)+p)
			}
		}
	}
	return out
}

// nbHyphen stands in for "-" while wrapping: ansi.Wrap always breaks at a hyphen, which would cut a node
// name or a command in a hint (ip-127-0-0-2.ec2.internal) so that it could no longer be copied.
const nbHyphen = "\u2011"

// wrapWords wraps s at width between words (spaces, commas, semicolons), never at a hyphen inside one; a
// word longer than the width is still cut.
func wrapWords(s string, width int) string {
	return strings.ReplaceAll(ansi.Wrap(strings.ReplaceAll(s, "-", nbHyphen), width, " ,;"), nbHyphen, "-")
}
