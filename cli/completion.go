package cli

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
)

// Shell completion (cobra's `wmcon completion bash|zsh|fish|powershell`): node names, Windows first, for
// the commands that take nodes; WMCO's services; the values of --on-pdb, --via and -o; kubeconfig contexts.
// Nothing completes to local file names where a node is expected.

// nodeCommands take node names as their arguments.
var nodeCommands = []string{"reboot", "drain", "cordon", "uncordon", "triage", "logs", "top", "restart-service", "deconfigure", "configure"}

// completionTimeout bounds the one list request a completion makes: a shell must not hang on TAB.
const completionTimeout = 5 * time.Second

func addCompletions(root *cobra.Command, g *globalOptions) {
	_ = root.RegisterFlagCompletionFunc("context", g.completeContexts)
	fixed(root, "theme", config.Themes...)
	for _, c := range root.Commands() {
		name := c.Name()
		if contains(nodeCommands, name) {
			c.ValidArgsFunction = g.completeNodes
		}
		if name == "restart-service" {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
				if len(args) == 1 {
					return serviceNames(), cobra.ShellCompDirectiveNoFileComp
				}
				if len(args) > 1 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return g.completeNodes(cmd, args, prefix)
			}
		}
		fixed(c, "on-pdb", event.ChoiceAbort, event.ChoiceWait, event.ChoiceDisableEviction)
		fixed(c, "via", "api", "ssh")
		fixed(c, "service", append(serviceNames(), "wicd", "events")...)
		fixed(c, "restart", serviceNames()...)
		fixed(c, "platform", nodeconfig.Platforms...)
		if f := c.Flags().Lookup("output"); f != nil && f.Value.Type() == "string" && f.Shorthand == "o" && c.Name() != "render" {
			fixed(c, "output", "text", "json")
		}
	}
}

// fixed completes a flag of cmd, when it has it, with a fixed list of values.
func fixed(cmd *cobra.Command, flag string, values ...string) {
	if cmd.Flags().Lookup(flag) == nil {
		return
	}
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

func serviceNames() []string {
	var out []string
	for _, s := range config.Services {
		out = append(out, s.Name)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// completeNodes lists the cluster's nodes, Windows first, with one request through the kubeconfig flags;
// the names already given are left out. The demo's names come from its seed, without starting it; a
// cluster that does not answer completes nothing.
func (g *globalOptions) completeNodes(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	if g.demo {
		if g.demoCluster == nil {
			return nil, none
		}
		windows, linux := g.demoCluster.NodeNames(g.fresh)
		return nodeChoices(windows, linux, args, prefix), none | cobra.ShellCompDirectiveKeepOrder
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	clients, _, err := cluster.Connect(ctx, g.kube)
	if err != nil {
		return nil, none
	}
	list, err := clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, none
	}
	var windows, linux []string
	for i := range list.Items {
		n := cluster.NodeInfoFrom(&list.Items[i], "")
		if n.Windows {
			windows = append(windows, n.Name)
		} else {
			linux = append(linux, n.Name)
		}
	}
	sort.Strings(windows)
	sort.Strings(linux)
	return nodeChoices(windows, linux, args, prefix), none | cobra.ShellCompDirectiveKeepOrder
}

// nodeChoices are the completions for a node argument: Windows nodes first, each described by its OS,
// leaving out those not matching prefix and those already given.
func nodeChoices(windows, linux, given []string, prefix string) []string {
	var out []string
	add := func(names []string, os string) {
		for _, n := range names {
			if strings.HasPrefix(n, prefix) && !contains(given, n) {
				out = append(out, n+"\t"+os)
			}
		}
	}
	add(windows, "Windows")
	add(linux, "Linux")
	return out
}

// completeContexts lists the kubeconfig's contexts.
func (g *globalOptions) completeContexts(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	raw, err := g.kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for name := range raw.Contexts {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}
