package event

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestACancelledStepSaysCancelled: a step ended by cancellation reads "drain cancelled" with the hint, not
// "failed: context canceled"; any other error keeps its text.
func TestACancelledStepSaysCancelled(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e := FailedStep("drain", "drain failed", fmt.Errorf("evict web-1: %w", context.Canceled), "node left cordoned")
	e.Time, e.Target = at, "win-a"
	assert.Equal(t, Cancelled, e.Outcome)
	assert.Equal(t, "12:00:00 win-a [drain] ✗ drain cancelled — node left cordoned", Format(e))
	assert.NotContains(t, Format(e), "context canceled")

	e = FailedStep("drain", "drain failed", errors.New("timed out"), "")
	e.Time = at
	assert.Equal(t, "12:00:00 [drain] ✗ drain failed: timed out", Format(e))
}

// TestAStepASignalStoppedNamesTheSignal: a step whose error carries the interrupt the command line cancels
// with says which signal stopped it, still as a cancellation.
func TestAStepASignalStoppedNamesTheSignal(t *testing.T) {
	in := &Interrupt{Word: "terminated", Signal: "SIGTERM"}
	assert.ErrorIs(t, in, context.Canceled, "an interrupt is a cancellation (exit codes, outcomes)")
	e := FailedStep("services", "", fmt.Errorf("waiting for kubelet: %w", in), "run it again")
	assert.Equal(t, Cancelled, e.Outcome)
	assert.Equal(t, "services stopped: terminated by SIGTERM", e.Message)
	assert.Empty(t, e.Err)
}
