package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/mirrors"
	"github.com/wmcon/wmcon/actions/proxy"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
	"github.com/wmcon/wmcon/session"
)

func newMirrorsCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mirrors",
		Short: "Registry mirrors on Windows nodes: containerd hosts.toml rendered from ImageDigestMirrorSets and ImageTagMirrorSets",
	}
	cmd.AddCommand(newMirrorsRenderCommand(g), newMirrorsStatusCommand(g), newMirrorsApplyCommand(g))
	return cmd
}

func newMirrorsRenderCommand(g *globalOptions) *cobra.Command {
	var files []string
	var pullSecret, dir string
	cmd := &cobra.Command{
		Use:   "render [-f FILE…] [--pull-secret FILE] -o DIR",
		Short: "Write the registries tree (one hosts.toml per source registry) that belongs under C:\\k\\containerd\\registries",
		Long: "render turns ImageDigestMirrorSets and ImageTagMirrorSets (from YAML/JSON files with -f, else from the\n" +
			"cluster) and the pull secret into exactly the files each Windows node needs. Files are written 0600:\n" +
			"they may carry registry credentials from the pull secret.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return errors.New("-o DIR is required: the directory to write the tree to")
			}
			in, err := renderInput(cmd.Context(), g, files, pullSecret)
			if err != nil {
				return err
			}
			tree, err := registries.Render(in)
			if err != nil {
				return fmt.Errorf("the mirror sets are invalid, nothing written:\n%w", err)
			}
			if err := writeTree(dir, tree); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, warn := range tree.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+warn)
			}
			for _, f := range tree.Files {
				fmt.Fprintf(w, "%s\t%d mirrors\n", filepath.Join(dir, f.Dir, "hosts.toml"), len(f.Mirrors))
			}
			if len(tree.Files) == 0 {
				fmt.Fprintln(w, "no source registry has mirrors: the registries directory stays empty")
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVarP(&files, "filename", "f", nil, "ImageDigestMirrorSet / ImageTagMirrorSet file (YAML or JSON, several documents or a List); repeatable")
	fs.StringVar(&pullSecret, "pull-secret", "", "pull secret: a .dockerconfigjson file or a Secret manifest (default with -f: none; without -f: the cluster's)")
	fs.StringVarP(&dir, "output", "o", "", "directory to write the tree to (must be empty or absent)")
	return cmd
}

// renderInput reads the mirror sets from files, or from the cluster when there are none.
func renderInput(ctx context.Context, g *globalOptions, files []string, pullSecret string) (registries.Input, error) {
	var in registries.Input
	if len(files) == 0 {
		s, err := g.openSession(ctx)
		if err != nil {
			return in, err
		}
		defer s.Close()
		if in, err = cluster.MirrorInput(ctx, s.Clients); err != nil {
			return in, err
		}
	}
	for _, f := range files {
		idms, itms, err := readMirrorSets(f)
		if err != nil {
			return in, err
		}
		in.DigestMirrorSets = append(in.DigestMirrorSets, idms...)
		in.TagMirrorSets = append(in.TagMirrorSets, itms...)
	}
	if pullSecret != "" {
		ps, err := readPullSecret(pullSecret)
		if err != nil {
			return in, err
		}
		in.PullSecret = ps
	}
	return in, nil
}

// writeTree writes the rendered files under dir, which must be empty or absent so nothing stale mixes in.
func writeTree(dir string, tree registries.Tree) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: choose an empty or new directory, so no stale file mixes with the tree", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, f := range tree.Files {
		sub := filepath.Join(dir, f.Dir)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", sub, err)
		}
		if err := os.WriteFile(filepath.Join(sub, "hosts.toml"), f.Content, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(sub, "hosts.toml"), err)
		}
	}
	return nil
}

// fleetNodes are the Windows nodes named, or all of them when none is.
// openFleet is what the status commands share: check -o, open the session and resolve the Windows nodes
// to read. The caller closes the session.
func openFleet(ctx context.Context, g *globalOptions, out outputFlags, names []string) (*session.Session, []model.NodeInfo, error) {
	if _, err := out.sink(io.Discard, nil); err != nil {
		return nil, nil, err
	}
	s, err := g.openSession(ctx)
	if err != nil {
		return nil, nil, err
	}
	nodes, err := fleetNodes(ctx, s, names)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, nodes, nil
}

func fleetNodes(ctx context.Context, s *session.Session, names []string) ([]model.NodeInfo, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		nodes := snap.WindowsNodes()
		if len(nodes) == 0 {
			return nil, errors.New("the cluster has no Windows nodes")
		}
		return nodes, nil
	}
	var out []model.NodeInfo
	for _, name := range names {
		n, err := s.Node(ctx, name)
		if err != nil {
			return nil, err
		}
		if !n.Windows {
			return nil, fmt.Errorf("%s is not a Windows node", name)
		}
		out = append(out, n)
	}
	return out, nil
}

func clusterTree(ctx context.Context, s *session.Session, warn io.Writer) (registries.Tree, error) {
	tree, err := cluster.MirrorTree(ctx, s.Clients)
	if err != nil {
		return tree, err
	}
	for _, w := range tree.Warnings {
		fmt.Fprintln(warn, "warning: "+w)
	}
	return tree, nil
}

func newMirrorsStatusCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var concurrency int
	cmd := &cobra.Command{
		Use:   "status [NODE…]",
		Short: "Compare each Windows node's registries directory with the cluster's mirror sets (read back over SSH, all nodes at once)",
		RunE: func(cmd *cobra.Command, names []string) error {
			ctx := cmd.Context()
			s, nodes, err := openFleet(ctx, g, out, names)
			if err != nil {
				return err
			}
			defer s.Close()
			tree, err := clusterTree(ctx, s, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			sts := mirrors.MirrorsStatus(ctx, s.Hosts, nodes, tree, concurrency)
			var drift, unread int
			for _, st := range sts {
				switch st.State {
				case mirrors.MirrorsOutOfStep:
					drift++
				case model.MirrorsUnknown:
					unread++
				}
				if out.format == "json" {
					b, _ := json.Marshal(st)
					fmt.Fprintln(cmd.OutOrStdout(), string(b))
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "%-40s %s\n", st.Node, st.Summary())
				}
			}
			return driftResult(drift, unread, len(sts), "are not in step: run wmcon mirrors apply")
		},
	}
	out.add(cmd.Flags())
	cmd.Flags().IntVar(&concurrency, "concurrency", rollout.DefaultConcurrency, "nodes read at once")
	return cmd
}

func newMirrorsApplyCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var concurrency int
	cmd := &cobra.Command{
		Use:   "apply [NODE…]",
		Short: "Replace the registries directory on Windows nodes (all when none named), several at once",
		Long: "apply writes the rendered tree beside C:\\k\\containerd\\registries and swaps it in, so containerd never\n" +
			"sees a half-written tree, then reads it back. Nodes run in parallel (--concurrency); one that fails or\n" +
			"drops is reported with its state and the others carry on; applying again converges. containerd reads\n" +
			"hosts.toml on every pull, so nothing is restarted.",
		RunE: func(cmd *cobra.Command, names []string) error {
			return g.changing(cmd, "apply registry mirrors", &out, nil, func(s *session.Session, sink event.Sink) error {
				ctx := cmd.Context()
				nodes, err := fleetNodes(ctx, s, names)
				if err != nil {
					return err
				}
				if _, err := clusterTree(ctx, s, cmd.ErrOrStderr()); err != nil { // its warnings, before any change
					return err
				}
				req := request.MirrorsApply{Concurrency: concurrency}
				for _, n := range nodes {
					req.Nodes = append(req.Nodes, n.Name)
				}
				return s.Runner.Run(ctx, req, sink) // audited by the Runner
			})
		},
	}
	out.add(cmd.Flags())
	cmd.Flags().IntVar(&concurrency, "concurrency", rollout.DefaultConcurrency, "nodes changed at once")
	return cmd
}

func newProxyCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "The cluster-wide proxy on Windows nodes: HTTP_PROXY, HTTPS_PROXY, NO_PROXY and the trusted CA bundle",
	}
	cmd.AddCommand(newProxyStatusCommand(g), newProxySyncCommand(g))
	return cmd
}

func newProxyStatusCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	cmd := &cobra.Command{
		Use:   "status [NODE…]",
		Short: "Compare each Windows node's proxy variables and CA bundle with the cluster's Proxy",
		RunE: func(cmd *cobra.Command, names []string) error {
			ctx := cmd.Context()
			s, nodes, err := openFleet(ctx, g, out, names)
			if err != nil {
				return err
			}
			defer s.Close()
			want, err := cluster.ClusterProxy(ctx, s.Clients)
			if err != nil {
				return err
			}
			sts := proxy.ProxyStatus(ctx, s.Hosts, nodes, want, 0)
			return printProxyStatus(cmd.OutOrStdout(), out.format == "json", want, sts)
		},
	}
	out.add(cmd.Flags())
	return cmd
}

func printProxyStatus(w io.Writer, asJSON bool, want model.Proxy, sts []proxy.ProxyNodeStatus) error {
	drift := 0
	if !asJSON {
		fmt.Fprintf(w, "cluster: HTTP_PROXY=%q HTTPS_PROXY=%q NO_PROXY=%q CA bundle: %s\n",
			model.RedactURL(want.HTTP), model.RedactURL(want.HTTPS), model.RedactURL(want.NoProxy), caSource(want))
	}
	unread := 0
	for _, st := range sts {
		switch {
		case st.Error != "":
			unread++
		case st.Drift:
			drift++
		}
		if asJSON {
			b, _ := json.Marshal(st)
			fmt.Fprintln(w, string(b))
			continue
		}
		if st.Error != "" {
			fmt.Fprintf(w, "%-40s unknown: %s\n", st.Node, st.Error)
			continue
		}
		var parts []string
		for _, v := range st.Vars {
			mark := ""
			if v.Drift {
				mark = " ≠"
			}
			parts = append(parts, fmt.Sprintf("%s=%q%s", v.Name, v.Have, mark))
		}
		state := "in step"
		if st.Drift {
			state = "DRIFT"
		}
		fmt.Fprintf(w, "%-40s %-7s %s ca-bundle=%s\n", st.Node, state, strings.Join(parts, " "), st.CABundle)
	}
	return driftResult(drift, unread, len(sts), "differ from the cluster's proxy: run wmcon proxy sync")
}

// driftResult is how a status command ends: a node that could not be read fails it (1), else drift is a
// check that found a problem (4, as triage's failing checks), so scripts can tell "cannot say" from "out
// of step".
func driftResult(drift, unread, total int, what string) error {
	switch {
	case unread > 0:
		return fmt.Errorf("%d of %d nodes could not be read (see above); %d %s", unread, total, drift, what)
	case drift > 0:
		return &exitError{code: ExitCheckFailed, err: fmt.Errorf("%d of %d nodes %s", drift, total, what)}
	}
	return nil
}

func caSource(p model.Proxy) string {
	if p.TrustedCAName == "" {
		return "none"
	}
	return "ConfigMap openshift-config/" + p.TrustedCAName
}

func newProxySyncCommand(g *globalOptions) *cobra.Command {
	var (
		out            outputFlags
		df             drainFlags
		reboot         bool
		maxUnavailable int
	)
	cmd := &cobra.Command{
		Use:   "sync [NODE…]",
		Short: "Write the cluster's proxy to Windows nodes (variables set or deleted, CA bundle), then offer the graceful reboot",
		Long: "sync sets HTTP_PROXY, HTTPS_PROXY and NO_PROXY as machine environment variables (deleting those the\n" +
			"cluster no longer sets) and replaces C:\\k\\ca-bundle.crt. Services see the change after a reboot:\n" +
			"with --reboot the changed nodes get the graceful reboot (cordon, drain respecting PodDisruptionBudgets,\n" +
			"restart, uncordon), --max-unavailable at a time; without it the command says which nodes to reboot.",
		RunE: func(cmd *cobra.Command, names []string) error {
			drain, answers, err := df.options()
			if err != nil {
				return err
			}
			if answers == nil {
				answers = map[string]string{}
			}
			if reboot {
				answers[proxy.ActionProxySync] = event.ChoiceReboot
			}
			return g.changing(cmd, "sync the proxy", &out, answers, func(s *session.Session, sink event.Sink) error {
				req := request.ProxySync{Nodes: names, Drain: drain, MaxUnavailable: maxUnavailable}
				return exitFor(s.Runner.Run(cmd.Context(), req, sink))
			})
		},
	}
	fs := cmd.Flags()
	out.add(fs)
	df.add(fs)
	fs.BoolVar(&reboot, "reboot", false, "reboot the changed nodes gracefully once synced")
	fs.IntVar(&maxUnavailable, "max-unavailable", request.DefaultMaxUnavailable, "how many nodes may be rebooting at once")
	return cmd
}
