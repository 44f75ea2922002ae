package remote

import (
	"context"
	"encoding/base64"
	"io"
	"unicode/utf16"
)

// Shell is a host's default SSH shell.
type Shell string

// The shells Windows OpenSSH is configured with.
const (
	PowerShell Shell = "powershell"
	Cmd        Shell = "cmd"
)

// wrap makes a PowerShell command runnable from the host's shell. On cmd it travels base64-encoded, so no
// quoting crosses cmd.exe.
func (s Shell) wrap(cmd string) string {
	if s != Cmd {
		return cmd
	}
	return "powershell.exe -NonInteractive -ExecutionPolicy Bypass -EncodedCommand " + encodeCommand(cmd)
}

// encodeCommand is -EncodedCommand's form: base64 of the UTF-16LE text.
func encodeCommand(cmd string) string {
	units := utf16.Encode([]rune(cmd))
	b := make([]byte, 2*len(units))
	for i, u := range units {
		b[2*i], b[2*i+1] = byte(u), byte(u>>8)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// detectShell asks the host once: Get-Help succeeds only in PowerShell.
func (c *Client) detectShell(ctx context.Context) (Shell, error) {
	c.mu.Lock()
	known := c.shell
	c.mu.Unlock()
	if known != "" {
		return known, nil
	}
	exit, err := c.execRaw(ctx, "Get-Help", io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	shell := Cmd
	if exit == 0 {
		shell = PowerShell
	}
	c.mu.Lock()
	c.shell = shell
	c.mu.Unlock()
	return shell, nil
}

// Shell returns the host's default shell, detecting it if needed.
func (c *Client) Shell(ctx context.Context) (Shell, error) { return c.detectShell(ctx) }
