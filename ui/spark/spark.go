// Package spark draws sparklines for the console: the Nodes pane's CPU history, the node details' and
// the health view's larger ones.
package spark

import (
	"fmt"
	"math"
	"strings"
)

// Line draws values (oldest first) as width level characters, newest at the right; lo..hi is the
// scale (hi <= lo: scaled to the values' own maximum). More values than width are taken in buckets, each
// drawn at its highest value so a short spike still shows; fewer leave the left blank.
func Line(values []float64, width int, lo, hi float64, levels string) string {
	if width <= 0 || levels == "" {
		return ""
	}
	glyphs := []rune(levels)
	points := bucketMax(values, width)
	if hi <= lo {
		lo, hi = 0, 0
		for _, v := range points {
			hi = max(hi, v)
		}
		if hi == 0 {
			hi = 1 // all zero: the lowest level
		}
	}
	var b strings.Builder
	b.Grow(width * 3)
	b.WriteString(strings.Repeat(" ", width-len(points)))
	for _, v := range points {
		f := (min(max(v, lo), hi) - lo) / (hi - lo)
		b.WriteRune(glyphs[int(math.Round(f*float64(len(glyphs)-1)))])
	}
	return b.String()
}

// bucketMax shrinks values to at most n points, each the highest of its bucket; the newest value always
// ends the last bucket.
func bucketMax(values []float64, n int) []float64 {
	if len(values) <= n {
		return values
	}
	out := make([]float64, n)
	for i := range n {
		from, to := i*len(values)/n, (i+1)*len(values)/n
		best := values[from]
		for _, v := range values[from+1 : to] {
			best = max(best, v)
		}
		out[i] = best
	}
	return out
}

// Bytes writes a byte count in at most four characters with a decimal unit, as the sparklines' figures
// are written: 950, 180K, 4.2M, 12G.
func Bytes(v float64) string {
	units := []string{"", "K", "M", "G", "T"}
	i := 0
	for v >= 999.5 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i > 0 && v < 9.95 {
		return fmt.Sprintf("%.1f%s", v, units[i])
	}
	return fmt.Sprintf("%.0f%s", v, units[i])
}
