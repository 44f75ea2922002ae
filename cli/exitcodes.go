package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/nodeops"
)

// The exit codes of wmcon, one table for every command (README "Exit codes" shows the same table; a test
// keeps them in step). 2 is what the guided setup's contract names for "left half-done, resumable"; no
// other command uses it, and the Go runtime also exits 2 on a crash, which then prints a stack trace.
const (
	ExitOK          = 0   // done
	ExitFailed      = 1   // failed, and nothing was left half-done (or refused, e.g. under --read-only)
	ExitSetupPartly = 2   // wmcon setup only: stopped part-way, resumable; the last line says what to run
	ExitHalfDone    = 3   // a node was left half-done (for example cordoned); the output says how to finish
	ExitCheckFailed = 4   // a check ran and found a problem: triage failed a check, mirrors or proxy status found drift
	ExitUnaudited   = 5   // a change was made but its audit record could not be written (the disk filled up)
	ExitUsage       = 64  // bad command line: unknown command or flag, wrong arguments, invalid flag value
	ExitCancelled   = 130 // interrupted (SIGINT/SIGTERM) before anything was changed
)

// exitPartial is the exit code of a command that left a node half-done.
const exitPartial = ExitHalfDone

// usageError is a bad command line.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// exitCode maps an error to the table: a change whose record was lost (whatever else went wrong: no
// script may take it for an ordinary failure), an explicit exitError, a node left half-done, a usage
// error, a cancellation that changed nothing, else a failure.
func exitCode(err error) int {
	var exit *exitError
	var partial *nodeops.PartialError
	var usage *usageError
	var unaudited *actions.UnauditedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &unaudited):
		return ExitUnaudited
	case errors.As(err, &exit):
		return exit.code
	case errors.As(err, &partial):
		return ExitHalfDone
	case errors.As(err, &usage):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitCancelled
	}
	return ExitFailed
}

// markUsageErrors makes every command's argument and flag errors usage errors (a negative duration and an
// int below its floor among them: checkFlagValues), and gives commands that only group subcommands a RunE
// that refuses an unknown subcommand (cobra would print help and exit 0).
func markUsageErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })
	checkFlagValues(cmd)
	if cmd.Args != nil {
		validate := cmd.Args
		cmd.Args = func(c *cobra.Command, args []string) error {
			for _, a := range args {
				if strings.IndexFunc(a, unicode.IsControl) >= 0 {
					return usageErrorf("argument %q contains control characters: node and service names never do", a)
				}
			}
			if err := validate(c, args); err != nil {
				return &usageError{err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
			}
			return nil
		}
	}
	if cmd.Run == nil && cmd.RunE == nil && cmd.HasSubCommands() {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = func(c *cobra.Command, args []string) error {
			var names []string
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			if len(args) == 0 {
				return usageErrorf("%s needs a subcommand: %v (see %s --help)", c.CommandPath(), names, c.CommandPath())
			}
			return usageErrorf("unknown command %q for %s: use one of %v", args[0], c.CommandPath(), names)
		}
	}
	for _, sub := range cmd.Commands() {
		markUsageErrors(sub)
	}
}
