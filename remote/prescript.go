package remote

import (
	"context"
	"fmt"
	"strings"
)

// The PowerShell pre-scripts of WMCO's services contract (windows-services-<version>): each runs on the host
// before its service is (re)configured, as WMCO's node daemon runs it, and its output, trimmed, may fill a
// variable of the service's command line. The contract carries them as PowerShell, so they are sent as they
// are (COMMANDS.md lists the ones WMCO 11 has).

// PreScripts runs the contract's pre-scripts.
type PreScripts interface {
	PreScriptValue(ctx context.Context, script string) (string, error)
	RunPreScript(ctx context.Context, script string) (string, error)
}

// PreScriptValue runs a pre-script whose output fills a variable (WMCO's read the host's name and address)
// and returns that output, trimmed. A script that fails, or prints nothing, is an error naming it.
func (c *Client) PreScriptValue(ctx context.Context, script string) (string, error) {
	return c.preScript(ctx, script)
}

// RunPreScript runs a pre-script for its effect on the host (one without a variable, such as WMCO's Defender
// exclusion), so --read-only refuses it; its output, trimmed, is returned.
func (c *Client) RunPreScript(ctx context.Context, script string) (string, error) {
	if err := c.changing("run a pre-script"); err != nil {
		return "", err
	}
	return c.preScript(ctx, script)
}

func (c *Client) preScript(ctx context.Context, script string) (string, error) {
	if strings.TrimSpace(script) == "" {
		return "", fmt.Errorf("pre-script on %s: the script is empty", c.Name())
	}
	out, err := c.RunOK(ctx, script)
	if err != nil {
		return "", fmt.Errorf("pre-script %q on %s: %w", summarize(script), c.Name(), err)
	}
	return strings.TrimSpace(out), nil
}

// Defender reads and changes Windows Defender's exclusions (WMCO's Defender pre-script's steps).
type Defender interface {
	DefenderRunning(ctx context.Context) (bool, error)
	AddDefenderExclusion(ctx context.Context, process string) error
}

// CloudMetadata reads the cloud's instance metadata from the host (WMCO's GCP host name script's step).
type CloudMetadata interface {
	GCPInstanceHostname(ctx context.Context) (string, error)
}

// DefenderRunning reports whether Windows Defender's antimalware service (MsMpEng) runs.
func (c *Client) DefenderRunning(ctx context.Context) (bool, error) {
	res, err := c.Run(ctx, cmdDefenderRunning())
	if err != nil {
		return false, err
	}
	for _, l := range lines(res.Stdout) {
		if strings.EqualFold(strings.TrimSpace(l), "MsMpEng") {
			return true, nil
		}
	}
	if res.Exit != 0 && strings.TrimSpace(res.Stderr) != "" { // a silenced "no such process" writes nothing
		return false, &CommandError{Host: c.Name(), Command: cmdDefenderRunning(), Exit: res.Exit, Stderr: res.Stderr}
	}
	return false, nil
}

// AddDefenderExclusion tells Windows Defender not to scan what the process opens.
func (c *Client) AddDefenderExclusion(ctx context.Context, process string) error {
	if err := c.changing("add a Windows Defender exclusion"); err != nil {
		return err
	}
	_, err := c.RunOK(ctx, cmdAddDefenderExclusion(process))
	return err
}

// GCPInstanceHostname is the host name GCP's metadata server gives the instance, as returned (the name GCP's
// cloud provider knows it by, before any shortening).
func (c *Client) GCPInstanceHostname(ctx context.Context) (string, error) {
	out, err := c.RunOK(ctx, cmdGCPHostname())
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
