package remote

import (
	"context"
	"fmt"
	"strings"
)

// ComputerName renames a Windows computer. WMCO does it to Machines on vSphere and Nutanix, whose images
// come up with a generated name (WIN-…) while the Node must carry the Machine's: Windows applies a new name
// only at the next restart, so the caller restarts the host (Reboot) before it reads the name again.
type ComputerName interface {
	RenameComputer(ctx context.Context, name string) error
}

// HostDNS reads the host's own DNS names.
type HostDNS interface {
	FullyQualifiedHostname(ctx context.Context) (string, error)
}

// RenameComputer gives the computer a new name, effective after the next restart (until then hostname
// still prints the old one). --read-only refuses it.
func (c *Client) RenameComputer(ctx context.Context, name string) error {
	if err := c.changing("rename the computer"); err != nil {
		return err
	}
	if _, err := c.RunOK(ctx, cmdRenameComputer(name)); err != nil {
		return fmt.Errorf("rename %s to %s: %w", c.Name(), name, err)
	}
	return nil
}

// FullyQualifiedHostname is the host name with the computer's primary DNS suffix (vSphere's node name), read
// from ipconfig /all as WMCO reads it; the bare host name when the computer has no suffix.
func (c *Client) FullyQualifiedHostname(ctx context.Context) (string, error) {
	out, err := c.RunOK(ctx, cmdIPConfigAll())
	if err != nil {
		return "", err
	}
	host, suffix := ipconfigField(out, "Host Name"), ipconfigField(out, "Primary Dns Suffix")
	if host == "" {
		return "", fmt.Errorf("ipconfig /all on %s shows no Host Name", c.Name())
	}
	if suffix == "" {
		return host, nil
	}
	return host + "." + suffix, nil
}

// ipconfigField is the value of a "   Name . . . : value" line of ipconfig's output, "" when absent or empty.
func ipconfigField(out, name string) string {
	for _, l := range lines(out) {
		label, value, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		label = strings.TrimRight(strings.TrimSpace(label), " .")
		if strings.EqualFold(label, name) {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
