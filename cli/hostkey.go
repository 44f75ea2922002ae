package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
)

func newHostKeyCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hostkey",
		Short: "Manage the pinned SSH host keys of Windows nodes",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "forget NODE",
		Short: "Forget a node's pinned host key, so the next connection trusts the key the host presents",
		Long: "wmcon pins each Windows host's SSH key on first use (on the Node, as WMCO does, or in the\n" +
			"windows-ssh-host-keys ConfigMap, or locally) and refuses a host whose key changed. After a host was\n" +
			"deliberately reinstalled, forget its key; the next connection pins the new one.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.refuseReadOnly("forget a host key"); err != nil {
				return err
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			node, err := s.Node(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			addr := s.SSHAddr(node)
			pinned, err := s.HostKeys.Pinned(cmd.Context(), node.Name, addr)
			if err != nil {
				return fmt.Errorf("look up the host key of %s: %w", node.Name, err)
			}
			if !pinned {
				_, err = fmt.Fprintf(g.stdout, "%s (%s) has no pinned host key, so there was nothing to forget: the next connection pins the key it presents\n", node.Name, addr)
				return err
			}
			// Run by the Runner like every change (which audits it); its outcome's message is the output.
			var done string
			sink := event.EmitFunc(func(e event.Event) {
				if e.Kind == event.Finished && e.Outcome == event.Succeeded {
					done = e.Message
				}
			})
			if err := s.Runner.Run(cmd.Context(), request.HostKeyForget{Node: node.Name, Address: addr}, sink); err != nil {
				return err
			}
			_, err = fmt.Fprintln(g.stdout, done)
			return err
		},
	})
	cmd.AddCommand(newHostKeyListCommand(g))
	return cmd
}

// pinnedKey is one line of hostkey list.
type pinnedKey struct {
	Node        string `json:"node"`
	Address     string `json:"address"`
	Type        string `json:"type,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"` // SHA256, as ssh-keygen -l prints it; "" when none is pinned
	Error       string `json:"error,omitempty"`
}

func newHostKeyListCommand(g *globalOptions) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the Windows nodes' pinned SSH host keys (type and SHA256 fingerprint)",
		Long: "hostkey list shows, for every Windows node, the address wmcon connects to and the fingerprint of the\n" +
			"host key pinned for it (on the Node, in the windows-ssh-host-keys ConfigMap, or locally), or that none\n" +
			"is pinned yet. It reads only; compare a fingerprint with the host's own (ssh-keygen -lf on the host's\n" +
			"C:\\ProgramData\\ssh\\ssh_host_ed25519_key.pub) before trusting a reinstalled host again.",
		Example: "  wmcon hostkey list\n  wmcon hostkey list -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageErrorf("--output %q: use text or json", format)
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			snap, err := s.Snapshot(cmd.Context())
			if err != nil {
				return err
			}
			var keys []pinnedKey
			for _, n := range snap.Nodes {
				if !n.Windows {
					continue
				}
				addr := s.SSHAddr(n)
				p := pinnedKey{Node: n.Name, Address: addr}
				key, ok, err := s.HostKeys.Lookup(cmd.Context(), addr)
				switch {
				case err != nil:
					p.Error = err.Error()
				case ok:
					p.Type, p.Fingerprint = key.Type(), ssh.FingerprintSHA256(key)
				}
				keys = append(keys, p)
			}
			return writePinnedKeys(g.stdout, keys, format)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text, or json (an array)")
	return cmd
}

func writePinnedKeys(w io.Writer, keys []pinnedKey, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(keys)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADDRESS\tHOST KEY")
	for _, k := range keys {
		key := k.Type + " " + k.Fingerprint
		switch {
		case k.Error != "":
			key = "cannot read: " + k.Error
		case k.Fingerprint == "":
			key = "not pinned (the next connection pins the key the host presents)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Node, k.Address, key)
	}
	return tw.Flush()
}
