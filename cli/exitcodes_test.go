package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/reboot"
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
	partial := &nodeops.PartialError{Node: "n", State: "cordoned", Err: errors.New("x")}
	for err, want := range map[error]int{
		nil:                          ExitOK,
		errors.New("boom"):           ExitFailed,
		partial:                      ExitHalfDone,
		fmt.Errorf("a: %w", partial): ExitHalfDone,
		errors.Join(&reboot.NotStartedError{Nodes: []string{"b"}, Err: context.Canceled}, partial): ExitHalfDone,
		&reboot.NotStartedError{Nodes: []string{"b"}, Err: context.Canceled}:                       ExitCancelled,
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

// TestInvalidValuesAreUsageErrors: a value a flag or argument cannot take is a bad command line (64), with a
// sentence naming it, before anything connects or is written; an unknown shell for completion too.
func TestInvalidValuesAreUsageErrors(t *testing.T) {
	keyOut := filepath.Join(t.TempDir(), "k")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo", "machineset", "scale", "x", "notanumber"}, `replicas "notanumber": give a whole number of Machines`},
		{[]string{"--demo", "machineset", "scale", "x", "3x"}, `replicas "3x"`},
		{[]string{"--demo", "key", "generate", "--type", "dsa", "--out", keyOut}, `--type "dsa": use ed25519 or rsa`},
		{[]string{"--demo", "key", "generate"}, "--out is required"},
		{[]string{"--demo", "key", "create"}, "--from-file is required"},
		{[]string{"--demo", "operator", "install", "--approval", "Sometimes"}, `--approval "Sometimes": use Automatic or Manual`},
		{[]string{"completion", "tcsh"}, `unknown command "tcsh" for wmcon completion`},
		{[]string{"--demo", "drain", "n", "--grace-period", "-5"}, `invalid argument "-5" for "--grace-period" flag: -5 is below -1`},
		{[]string{"--demo", "configure", "--address", "127.0.0.5", "--csr-timeout", "-1s"}, `"--csr-timeout" flag: a duration cannot be negative`},
		{[]string{"--demo", "mirrors", "apply", "--concurrency", "0"}, `"--concurrency" flag: 0 is below 1`},
		{[]string{"--demo", "proxy", "sync", "--max-unavailable", "0"}, `"--max-unavailable" flag: 0 is below 1`},
		{[]string{"--demo", "machineset", "generate", "--replicas", "-1"}, `"--replicas" flag: -1 is below 0`},
		{[]string{"--demo", "machineset", "generate", "--format", "xml"}, `--format "xml": use yaml or json`},
		{[]string{"--demo", "byoh", "list", "-o", "yaml"}, `--output "yaml": use text or json`},
	} {
		code, out, errOut := runWmcon(t, tc.args...)
		assert.Equal(t, ExitUsage, code, "%v: %s%s", tc.args, out, errOut)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
	_, err := os.Stat(keyOut)
	assert.True(t, os.IsNotExist(err), "no key was written for a refused command line")
	code, out, _ := runWmcon(t, "completion", "bash")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, "bash completion")
}

// TestEveryDurationAndFloorFlagRefusesItsBadValues walks the whole command tree: every duration flag refuses
// a negative value and every int flag with a floor refuses the value below it, as usage errors naming the
// flag, so no command (including ones added later) accepts a negative timeout, interval or grace period.
func TestEveryDurationAndFloorFlagRefusesItsBadValues(t *testing.T) {
	var walk func(cmd *cobra.Command)
	checked := 0
	walk = func(cmd *cobra.Command) {
		path := strings.Fields(cmd.CommandPath())[1:]
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			bad := ""
			switch floor, ok := intFloors[f.Name]; {
			case f.Value.Type() == "duration":
				bad = "-1s"
			case ok && strings.HasPrefix(f.Value.Type(), "int"):
				bad = strconv.FormatInt(floor.min-1, 10)
			default:
				return
			}
			args := append(append([]string{}, path...), "--"+f.Name+"="+bad)
			code, _, errOut := runWmcon(t, args...)
			assert.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
			assert.Contains(t, errOut, fmt.Sprintf("invalid argument %q for \"--%s\" flag", bad, f.Name), args)
			checked++
		})
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(io.Discard, io.Discard, testDemo))
	assert.Greater(t, checked, 20, "the walk reached the commands' flags")
}
