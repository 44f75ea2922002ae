package setup

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions/request"
)

// shellWords is what a POSIX shell makes of a wmcon command line pasted from a hint: its arguments.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "wmcon ")
	require.True(t, ok, line)
	out, err := exec.Command("sh", "-c", "printf '%s\\0' "+rest).Output()
	require.NoError(t, err, line)
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// TestMachineSetHintKeepsEachValueWhole: the command a MachineSet's plan prints gives a shell exactly the
// values of the request, whatever they hold (configure's hints are checked in package configure).
func TestMachineSetHintKeepsEachValueWhole(t *testing.T) {
	ms := request.MachineSetGenerate{Image: "ami-1 x", Zone: "us-east-1a;id", Replicas: ptr.To[int32](2)}
	assert.Equal(t, []string{"machineset", "generate", "--apply", "--name", "w", "--image", "ami-1 x", "--zone", "us-east-1a;id", "--replicas", "2"},
		shellWords(t, machineSetCommand(ms, "w", false)))
}
