package configure

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/remote"
)

// renameHost is a host whose rename, restart and name can be made to fail (the simulator's real SSH path is
// covered end to end by cli's TestConfigureVSphereMachineTakesTheMachinesName).
type renameHost struct {
	renameErr, rebootErr error
	name                 string
	keepName             bool // the restart does not bring the new name
	renamed, rebooted    bool
}

func (h *renameHost) Hostname(context.Context) (string, error) { return h.name, nil }
func (h *renameHost) RenameComputer(_ context.Context, name string) error {
	if h.renameErr != nil {
		return h.renameErr
	}
	h.renamed = true
	if h.rebootErr == nil && !h.keepName {
		h.name = name
	}
	return nil
}
func (h *renameHost) Reboot(context.Context, remote.RebootOptions) error {
	h.rebooted = true
	return h.rebootErr
}

// Every failure of the rename names how it left the host, in the error and in the run's last event.
func TestRenameFailuresSayHowTheHostWasLeft(t *testing.T) {
	for _, tc := range []struct {
		name string
		host *renameHost
		left string
	}{
		{"rename refused", &renameHost{name: "WIN-A1", renameErr: errors.New("the new name is not valid")}, "the host was not changed"},
		{"restart failed", &renameHost{name: "WIN-A1", rebootErr: errors.New("the host did not come back")}, "keeps its old name until it restarts"},
		{"name not taken", &renameHost{name: "WIN-A1", keepName: true}, "renamed and restarted, and nothing else was changed"},
		{"renamed", &renameHost{name: "WIN-A1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []event.Event
			r := event.Reporter{Sink: event.EmitFunc(func(e event.Event) { events = append(events, e) }), Action: ConfigureAction, Target: "x"}
			creq := &ConfigureRequest{}
			creq.Host.NodeName = "win-a1"
			err := renameToMachine(context.Background(), tc.host, &machineRename{from: "win-a1", to: "winvs-1"}, creq, r)
			if tc.left == "" {
				require.NoError(t, err)
				assert.Equal(t, "winvs-1", creq.Host.NodeName)
				assert.True(t, tc.host.rebooted)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.left)
			last := events[len(events)-1]
			assert.Equal(t, event.Finished, last.Kind)
			assert.Contains(t, last.Message, tc.left)
			assert.NotEmpty(t, last.Hint)
			assert.Equal(t, "win-a1", creq.Host.NodeName, "the node name is not taken from a failed rename")
		})
	}
}
