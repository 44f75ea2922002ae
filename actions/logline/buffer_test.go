package logline_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/logline"
)

func bufferLines(from, to int) []logline.Line {
	var out []logline.Line
	for i := from; i <= to; i++ {
		out = append(out, logline.Line{Text: fmt.Sprint(i), Seq: uint64(i)})
	}
	return out
}

func logTexts(lines []logline.Line) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.Text)
	}
	return out
}

func TestLogBufferKeepsTheNewestWithinItsBound(t *testing.T) {
	b := logline.NewBuffer(5)
	b.Append(bufferLines(1, 3)...)
	require.Equal(t, []string{"1", "2", "3"}, logTexts(b.Lines()))
	require.Equal(t, uint64(0), b.First())
	b.Append(bufferLines(4, 8)...)
	require.Equal(t, []string{"4", "5", "6", "7", "8"}, logTexts(b.Lines()))
	require.Equal(t, 5, b.Len())
	require.Equal(t, uint64(3), b.Evicted())
	require.Equal(t, uint64(8), b.Total())
	_, ok := b.Get(2)
	require.False(t, ok, "evicted lines are gone")
	l, ok := b.Get(3)
	require.True(t, ok)
	require.Equal(t, "4", l.Text)

	// A burst larger than the whole buffer keeps its newest lines, and counts the rest as evicted.
	b.Append(bufferLines(9, 20)...)
	require.Equal(t, []string{"16", "17", "18", "19", "20"}, logTexts(b.Lines()))
	require.Equal(t, uint64(20), b.Total())
	require.Equal(t, uint64(15), b.First())
	require.Equal(t, "16", b.At(0).Text)

	b.Reset()
	require.Equal(t, 0, b.Len())
	require.Equal(t, uint64(20), b.First())
	require.Zero(t, b.Evicted(), "lines cleared by a reset (another service's) were not dropped")
	b.Append(bufferLines(21, 21)...)
	l, ok = b.Get(20)
	require.True(t, ok)
	require.Equal(t, "21", l.Text)
	require.Zero(t, b.Evicted())
	b.Append(bufferLines(22, 27)...)
	require.Equal(t, uint64(2), b.Evicted(), "only drops since the reset count")
}

func TestLogBufferDefaultBound(t *testing.T) {
	b := logline.NewBuffer(0)
	require.Equal(t, logline.DefaultBufferLines, b.Cap())
	for i := range 3 {
		b.Append(bufferLines(i*logline.DefaultBufferLines+1, (i+1)*logline.DefaultBufferLines)...)
	}
	require.Equal(t, logline.DefaultBufferLines, b.Len())
	require.Equal(t, fmt.Sprint(2*logline.DefaultBufferLines+1), b.At(0).Text)
}
