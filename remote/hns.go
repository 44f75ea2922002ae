package remote

import (
	"context"
	"strings"
)

// The Host Networking Service networks of a node, read and removed with the hns.psm1 module WMCO installs
// (C:\Temp\hns.psm1): its cmdlets exist in a session only once the module is imported there.

func cmdImportModule(path string) string {
	return "Import-Module -DisableNameChecking -Name " + Quote(path)
}

// HNSNetworks lists the names of the host's HNS networks, with the module at module. One round trip.
func (c *Client) HNSNetworks(ctx context.Context, module string) ([]string, error) {
	out, err := c.RunOK(ctx, joinCommands([]string{cmdImportModule(module), "Get-HnsNetwork | ForEach-Object { $_.Name }"}))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, l := range lines(out) {
		if l = strings.TrimSpace(l); l != "" {
			names = append(names, l)
		}
	}
	return names, nil
}

// RemoveHNSNetworks removes the named HNS networks, with the module at module. One round trip.
func (c *Client) RemoveHNSNetworks(ctx context.Context, module string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if err := c.changing("remove HNS networks"); err != nil {
		return err
	}
	cmds := []string{cmdImportModule(module)}
	for _, n := range names {
		cmds = append(cmds, "Get-HnsNetwork | Where-Object -Property Name -EQ -Value "+Quote(n)+" | Remove-HnsNetwork")
	}
	_, err := c.RunOK(ctx, joinCommands(cmds))
	return err
}
