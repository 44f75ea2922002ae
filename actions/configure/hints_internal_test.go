package configure

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// TestHintCommandsKeepEachValueWhole: the commands hints and plans print (configure's resume; the
// MachineSet's in package setup) give a shell exactly the values of the request, whatever they hold.
func TestHintCommandsKeepEachValueWhole(t *testing.T) {
	dir := "/tmp/my payload;touch /tmp/wmcon-pwned"
	req := request.Configure{Address: "127.0.0.5", User: "Administrator", PayloadDir: dir}
	assert.Equal(t, []string{"configure", "--address", "127.0.0.5", "--user", "Administrator", "--payload", dir},
		shellWords(t, configureCommand(req)))
	req = request.Configure{Node: "win-a", PayloadImage: "registry.example.com/wmco:v1 $(id)"}
	assert.Equal(t, []string{"configure", "win-a", "--payload-image", "registry.example.com/wmco:v1 $(id)"}, shellWords(t, configureCommand(req)))
	assert.Equal(t, []string{"configure", "--address", "127.0.0.5", "--watch"},
		shellWords(t, configureCommand(watching(request.Configure{Address: "127.0.0.5"}))), "--watch goes with the address when there is no node")

}
