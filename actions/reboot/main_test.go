package reboot_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wmcon/wmcon/actions/reboot"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// TestMain starts the real API server these tests share.
func TestMain(m *testing.M) { actiontest.Main(m) }

// rebootOpts are fast reboot options for tests, and a path for the audit log in the test's temp dir.
func rebootOpts(t *testing.T) (reboot.RebootOptions, string) {
	path := filepath.Join(t.TempDir(), "state", "wmcon", "audit.log")
	o := reboot.RebootOptions{
		Drain:        request.DefaultDrainOptions(),
		DownTimeout:  10 * time.Second,
		UpTimeout:    20 * time.Second,
		ReadyTimeout: 20 * time.Second,
		PollInterval: 100 * time.Millisecond,
		Platform:     "None",
	}
	return o, path
}
