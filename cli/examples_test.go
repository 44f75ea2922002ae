package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryCommandHasExamples: every command a user runs shows examples in its --help, and every example
// names that command and only flags it has, with values they accept.
func TestEveryCommandHasExamples(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard, testDemo)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	checked := 0
	walk(root, func(c *cobra.Command) {
		path := c.CommandPath()
		if !c.Runnable() || c.Hidden || strings.HasPrefix(path, "wmcon help") || strings.HasPrefix(path, "wmcon completion") {
			return
		}
		lines := exampleLines(c.Example)
		if !assert.NotEmpty(t, lines, "%s has no examples in its --help", path) {
			return
		}
		for _, line := range lines {
			checkExample(t, path, line)
			checked++
		}
	})
	assert.Greater(t, checked, 40)
}

// checkExample parses one example on a fresh command tree: it must reach the command it illustrates (or,
// for a group, one of its subcommands), and its flags must parse there.
func checkExample(t *testing.T, path, line string) {
	t.Helper()
	args := strings.Fields(line)
	require.Equal(t, "wmcon", args[0], "%s: %q", path, line)
	root := NewRootCommand(io.Discard, io.Discard, testDemo)
	cmd, rest, err := root.Find(args[1:])
	require.NoError(t, err, "%s: %q", path, line)
	got := cmd.CommandPath()
	if cmd.HasParent() && path != "wmcon" && got != path { // a group's examples show its subcommands
		assert.True(t, strings.HasPrefix(got, path+" "), "the example %q is of another command", line)
	} else {
		assert.Equal(t, path, got, "the example %q is of another command", line)
	}
	assert.NoError(t, cmd.ParseFlags(rest), "%s: %q", path, line)
}

func TestHelpShowsTheExamples(t *testing.T) {
	code, out, _ := runWmcon(t, "drain", "--help")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "Examples:")
	assert.Contains(t, out, "wmcon drain ip-127-0-1-23.ec2.internal --dry-run")
}
