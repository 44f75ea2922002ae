package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/session"
)

// The command-line edges a kubectl user notices (issue 25 item 10).

// TestBYOHRemoveOfANonEntryAsksNothing: removing an address that is not in windows-instances fails before
// any question, naming the entries there are.
func TestBYOHRemoveOfANonEntryAsksNothing(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "byoh", "remove", "127.9.9.9", "--yes")
	assert.Equal(t, ExitFailed, code)
	assert.NotContains(t, out, "? ", "no question for what is not there")
	assert.NotContains(t, out, "Remove 127.9.9.9")
	assert.Contains(t, out, "✗ 127.9.9.9 is not in windows-instances (entries: 127.0.0.5)")
	assert.Contains(t, errOut, "127.9.9.9 is not in windows-instances")
}

// TestBYOHAddWithoutAUserIsAUsageError: byoh add without --user is a bad command line (64) refused before
// anything runs.
func TestBYOHAddWithoutAUserIsAUsageError(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "byoh", "add", "127.0.0.9")
	require.Equal(t, ExitUsage, code, errOut)
	assert.Empty(t, out, "nothing started")
	assert.Contains(t, errOut, "give the Windows user WMCO logs in as")
}

// TestBYOHAddWithWMCOSaysTheOperatorConfiguresIt: where WMCO is installed (the demo), byoh add says the
// operator configures the host; without it the words name wmcon configure (TestKeyAndBYOHCommandsAgainstTheAPIServer).
func TestBYOHAddWithWMCOSaysTheOperatorConfiguresIt(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "byoh", "add", "127.0.0.9", "--user", "Administrator")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "127.0.0.9 added: WMCO configures it as a Windows node")
}

// TestSetupPreviewIsNotAFailure: setup without --yes shows the next step's plan and stops (exit 2, resumable);
// a normal preview never reads FAILED (issue 25 item 9).
func TestSetupPreviewIsNotAFailure(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo=fresh", "setup")
	require.Equal(t, ExitSetupPartly, code, "%s\n%s", out, errOut)
	assert.NotContains(t, out, "FAILED")
	assert.Contains(t, out, "SUCCEEDED setup stopped at operator: preview: the plan above is what it does, nothing was changed — run it again with --yes to apply it")
}

// TestUpgradeRunOfANodeAtTheTargetSucceeds: upgrading a node that is at the target already has nothing to do,
// which is success (exit 0), saying so (issue 25 item 10).
func TestUpgradeRunOfANodeAtTheTargetSucceeds(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "upgrade", "run", "ip-127-0-0-2.ec2.internal")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "nothing to do: ip-127-0-0-2.ec2.internal at 11.0.1 already")
	assert.NotContains(t, out, "FAILED")
}

// TestDemoKeyGoesToItsPrivateDirectory: on the demo a generated key's default place is the demo's private
// directory, never ~/.ssh, in the console's forms and in wmcon setup --generate-key (issue 25 item 9).
func TestDemoKeyGoesToItsPrivateDirectory(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	code, out, errOut := runWmcon(t, "--demo=fresh", "setup", "--standalone", "--generate-key", "--yes")
	require.Equal(t, ExitSetupPartly, code, "%s\n%s", out, errOut) // stops at machines: no --byoh
	assert.Contains(t, out, "wrote ")
	assert.NotContains(t, out, filepath.Join(home, ".ssh"))
	_, err := os.Stat(filepath.Join(home, ".ssh"))
	assert.True(t, os.IsNotExist(err), "nothing written under ~/.ssh")

	b, err := testDemo.Open(false)
	require.NoError(t, err)
	s, err := session.New(context.Background(), session.Options{Backend: b})
	require.NoError(t, err)
	defer s.Close()
	g := &globalOptions{}
	opts := consoleOptions(g, s)
	assert.Equal(t, filepath.Join(s.Sandbox().Dir, "wmcon_windows_ed25519"), opts.KeyOut, "the console's forms offer the same place")
}

// TestAChangeNamesItsAuditLog: a headless change ends naming the audit log its record went to (the demo's
// private one here); -o json carries it as "audit" on the finished event (issue 25, Also).
func TestAChangeNamesItsAuditLog(t *testing.T) {
	node := "ip-127-0-0-2.ec2.internal"
	code, out, errOut := runWmcon(t, "--demo", "cordon", node)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `SUCCEEDED .*\n  recorded in the audit log /\S+/wmcon-demo-\d+/audit\.log\n`, out)
	code, out, errOut = runWmcon(t, "--demo", "cordon", node, "-o", "json")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `"kind":"finished".*"audit":"/\S+/wmcon-demo-\d+/audit\.log"`, out)
}

// TestHelpUsesThePluginName: called as kubectl-wmcon or oc-wmcon (the plugin names make install links),
// the help's usage lines and examples say "kubectl wmcon" / "oc wmcon"; paths that contain wmcon stay
// (issue 25, Also).
func TestHelpUsesThePluginName(t *testing.T) {
	for _, tc := range []struct{ argv0, name string }{
		{"/usr/local/bin/kubectl-wmcon", "kubectl wmcon"}, {"oc-wmcon", "oc wmcon"}, {"/usr/local/bin/wmcon", "wmcon"}} {
		var out, errOut bytes.Buffer
		root := NewRootCommand(&out, &errOut, testDemo)
		calledAs(root, tc.argv0)
		root.SetArgs([]string{"key", "--help"})
		require.NoError(t, root.Execute())
		help := out.String()
		assert.Contains(t, help, "\n  "+tc.name+" key [command]\n", tc.argv0)
		assert.Contains(t, help, "Use \""+tc.name+" key [command] --help\"")
		assert.Contains(t, help, "\n  "+tc.name+" key generate --out ~/.ssh/wmcon_windows_ed25519\n", "examples, the path kept")
		if tc.name != "wmcon" {
			assert.NotContains(t, help, "\n  wmcon ", "no line starts with the bare name")
		}
	}
}

// TestLogsTailIsPerNode: --tail applies to each node, as kubectl applies it per source: with -l over the
// demo's 5 Windows nodes, --tail 1 prints one line of each (issue 25 item 10; already so on main, kept).
func TestLogsTailIsPerNode(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "logs", "-l", "kubernetes.io/os=windows", "--tail", "1")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	perNode := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		node, _, ok := strings.Cut(strings.TrimPrefix(l, "["), "]")
		require.True(t, ok, l)
		perNode[node]++
	}
	assert.Len(t, perNode, 5, "every Windows node")
	for node, n := range perNode {
		assert.Equal(t, 1, n, node)
	}
}
