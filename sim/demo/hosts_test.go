package demo

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/sim/windows"
)

// The demo's load swings, but the busy node stays busy and the quiet one quiet, memory stays put and
// the network never goes negative.
func TestSwingKeepsEachHostInItsBand(t *testing.T) {
	busy := windows.Load{CPUBusy: 0.96, MemoryUsed: 0.81, RxBytesPS: 4.2e6, TxBytesPS: 1.1e6}
	quiet := windows.Load{CPUBusy: 0.12, MemoryUsed: 0.45, RxBytesPS: 180e3, TxBytesPS: 60e3}
	moved := false
	for i := range 200 {
		phase := float64(i) / 6
		b, q := swing(busy, phase), swing(quiet, phase)
		assert.Greater(t, b.CPUBusy, 0.92)
		assert.LessOrEqual(t, b.CPUBusy, 1.0)
		assert.InDelta(t, 0.12, q.CPUBusy, 0.08)
		assert.Equal(t, busy.MemoryUsed, b.MemoryUsed)
		assert.Positive(t, q.RxBytesPS)
		moved = moved || q.CPUBusy != quiet.CPUBusy
	}
	assert.True(t, moved)
}
