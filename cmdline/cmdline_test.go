package cmdline

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAShellGetsExactlyTheArguments pastes each command line into a real POSIX shell, which prints the
// arguments it got one per NUL-terminated record: each value arrives whole and unchanged, and nothing in
// one (a ';', a '$(…)', a quote) runs or splits.
func TestAShellGetsExactlyTheArguments(t *testing.T) {
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	values := []string{"Administrator", "ip-127-0-0-5.ec2.internal", "127.0.0.5", "John Smith", "a;touch /tmp/wmcon-pwned",
		"$(id)", "`id`", "it's", `"quoted"`, "tab\there", "new\nline", "", "*", "~root", "a\\b", "-x", "ünïcode", "x=y", "'", "''"}
	for _, v := range values {
		line := Wmcon("configure", "--user", v)
		require.True(t, strings.HasPrefix(line, "wmcon "), line)
		// The shell runs printf in wmcon's place with the same words.
		script := "printf '%s\\0' " + strings.TrimPrefix(line, "wmcon ")
		out, err := exec.Command(sh, "-c", script).Output()
		require.NoError(t, err, "%q: %s", v, script)
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		assert.Equal(t, []string{"configure", "--user", v}, got, "%q as %s", v, line)
	}
}

func TestPlainWordsStayReadable(t *testing.T) {
	assert.Equal(t, "wmcon uncordon ip-127-0-0-5.ec2.internal", Wmcon("uncordon", "ip-127-0-0-5.ec2.internal"))
	assert.Equal(t, "wmcon configure --address 127.0.0.5 --user 'John Smith' --payload /tmp/p",
		Wmcon("configure", "--address", "127.0.0.5", "--user", "John Smith", "--payload", "/tmp/p"))
	assert.Equal(t, `'it'\''s'`, Quote("it's"))
	assert.Equal(t, "''", Quote(""))
}
