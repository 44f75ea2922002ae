package cli

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/setup"
)

// How wmcon setup ends maps onto the exit code table.
func TestSetupExitCodes(t *testing.T) {
	stopped := &setup.SetupStopped{Step: event.SetupKey, Reason: "no SSH key", Hint: "pass --key FILE"}
	for _, c := range []struct {
		name    string
		err     error
		changed bool
		want    int
	}{
		{"complete", nil, true, ExitOK},
		{"stopped part-way for a flag", stopped, false, ExitSetupPartly},
		{"a step failed", errors.New("create RuntimeClass: forbidden"), true, ExitFailed},
		{"interrupted after a change", context.Canceled, true, ExitSetupPartly},
		{"interrupted before any change", context.Canceled, false, ExitCancelled},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, exitCode(setupExit(c.err, setup.SetupResult{Changed: c.changed})))
		})
	}
}
