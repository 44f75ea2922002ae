package actions_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

func TestMain(m *testing.M) { actiontest.Main(m) }

// rebootOpts are fast reboot options for tests, and a path for the audit log in the test's temp dir.
func rebootOpts(t *testing.T) (actions.RebootOptions, string) {
	path := filepath.Join(t.TempDir(), "state", "wmcon", "audit.log")
	o := actions.RebootOptions{
		Drain:        request.DefaultDrainOptions(),
		DownTimeout:  10 * time.Second,
		UpTimeout:    20 * time.Second,
		ReadyTimeout: 20 * time.Second,
		PollInterval: 100 * time.Millisecond,
		Platform:     "None",
	}
	return o, path
}
