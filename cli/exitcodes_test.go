package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
)

// TestExitCodeTableMatchesTheREADME: the README's table is the one scripts read; it lists exactly the codes
// of exitcodes.go, each once.
func TestExitCodeTableMatchesTheREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	var documented []int
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \| `).FindAllStringSubmatch(string(readme), -1) {
		n, _ := strconv.Atoi(m[1])
		documented = append(documented, n)
	}
	assert.Equal(t, []int{ExitOK, ExitFailed, ExitSetupPartly, ExitHalfDone, ExitCheckFailed, ExitUnaudited, ExitUsage, ExitCancelled}, documented)
}

func TestExitCodeOfEachKindOfError(t *testing.T) {
	partial := &actions.PartialError{Node: "n", State: "cordoned", Err: errors.New("x")}
	for err, want := range map[error]int{
		nil:                          ExitOK,
		errors.New("boom"):           ExitFailed,
		partial:                      ExitHalfDone,
		fmt.Errorf("a: %w", partial): ExitHalfDone,
		errors.Join(&actions.NotStartedError{Nodes: []string{"b"}, Err: context.Canceled}, partial): ExitHalfDone,
		&actions.NotStartedError{Nodes: []string{"b"}, Err: context.Canceled}:                       ExitCancelled,
		usageErrorf("--x"): ExitUsage,
		&exitError{code: ExitCheckFailed, err: errors.New("checks")}:                                          ExitCheckFailed,
		&actions.UnauditedError{WriteErr: errors.New("file too large")}:                                       ExitUnaudited,
		&exitError{code: ExitHalfDone, err: &actions.UnauditedError{WriteErr: errors.New("x"), Err: partial}}: ExitUnaudited,
	} {
		assert.Equal(t, want, exitCode(err), "%v", err)
	}
}

// TestUsageErrorsAreNotFailures: a wrong command line exits 64, distinct from a failed action (1) or check (4);
// an unknown subcommand is an error, not help and 0.
func TestUsageErrorsAreNotFailures(t *testing.T) {
	for _, args := range [][]string{
		{"cordon"}, {"--no-such-flag"}, {"hostkey", "forgt", "x"}, {"hostkey"}, {"frobnicate"},
		{"--demo", "logs", "n", "-o", "yaml"},
	} {
		code, _, errOut := runWmcon(t, args...)
		assert.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
	}
	_, _, errOut := runWmcon(t, "hostkey", "forgt", "x")
	assert.Contains(t, errOut, `unknown command "forgt"`)
	assert.Contains(t, errOut, "forget")
}

// TestRebootCancelledBeforeItStartsIsNotSuccess: nothing changed, but nothing was done either.
func TestRebootCancelledBeforeItStartsIsNotSuccess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut strBuf
	root := NewRootCommand(&out, &errOut, testDemo)
	root.SetArgs([]string{"--demo", "reboot", "ip-127-0-0-2.ec2.internal"})
	err := root.ExecuteContext(ctx)
	require.Error(t, err)
	assert.Equal(t, ExitCancelled, exitCode(err), "%v", err)
}

type strBuf struct{ b []byte }

func (s *strBuf) Write(p []byte) (int, error) { s.b = append(s.b, p...); return len(p), nil }

// TestConsoleWithoutATerminalSaysSo: the console on a pipe (as under go test, cron or CI) is refused with a
// sentence naming the headless commands, as a usage error, before anything connects.
func TestConsoleWithoutATerminalSaysSo(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo")
	assert.Equal(t, 64, code, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "the console needs a terminal")
	assert.Contains(t, errOut, "wmcon triage NODE")
	assert.NotContains(t, errOut, "/dev/tty", "no raw terminal error")
}
