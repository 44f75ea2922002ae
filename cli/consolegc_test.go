package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestConsoleGCKeepsTheUsersGOGC: the console collects at consoleGCPercent unless GOGC says otherwise.
func TestConsoleGCKeepsTheUsersGOGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	consoleGC(func(string) string { return "" })
	assert.Equal(t, consoleGCPercent, debug.SetGCPercent(100), "the console's own target")

	consoleGC(func(k string) string { return map[string]string{"GOGC": "200"}[k] })
	assert.Equal(t, 100, debug.SetGCPercent(100), "a GOGC the user set is left alone")
}
