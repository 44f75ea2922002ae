package cli

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/config"
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
			addr := net.JoinHostPort(node.InternalIP, strconv.Itoa(config.SSHPort))
			if s.Demo != nil {
				addr = s.Demo.HostAddrs()[node.Name]
			}
			pinned, err := s.HostKeys.Pinned(cmd.Context(), node.Name, addr)
			if err != nil {
				return fmt.Errorf("look up the host key of %s: %w", node.Name, err)
			}
			if !pinned {
				_, err = fmt.Fprintf(g.stdout, "%s (%s) has no pinned host key, so there was nothing to forget: the next connection pins the key it presents\n", node.Name, addr)
				return err
			}
			// Audited like every change: the record names the node and the cluster; the line below is the output.
			sink, err := s.Audited(cmd.Context(), &event.TextSink{W: io.Discard}, "address "+addr)
			if err != nil {
				return err
			}
			r := event.Reporter{Sink: sink, Action: "hostkey-forget", Target: node.Name}
			r.Started("forget", "forgetting the pinned host key of "+addr)
			if err := s.HostKeys.Forget(cmd.Context(), node.Name, addr); err != nil {
				err = fmt.Errorf("forget the host key of %s: %w", node.Name, err)
				r.Failed("forget", err, "")
				r.Finish(event.Failed, err.Error(), "")
				return err
			}
			msg := fmt.Sprintf("forgot the pinned host key of %s (%s): the next connection pins the key it presents", node.Name, addr)
			r.Done("forget", msg)
			r.Finish(event.Succeeded, msg, "")
			_, err = fmt.Fprintln(g.stdout, msg)
			return err
		},
	})
	return cmd
}
