package cli

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/wmcon/wmcon/session"
)

// selectorFlag is -l/--selector: the nodes a multi-node command acts on, chosen by label as with
// oc adm drain -l, instead of by name.
type selectorFlag struct{ selector string }

func (f *selectorFlag) add(fs *pflag.FlagSet) {
	fs.StringVarP(&f.selector, "selector", "l", "",
		"act on the nodes matching this label selector (e.g. -l kubernetes.io/os=windows) instead of named nodes")
}

// args checks the arguments before anything is opened: node names or a selector that parses, not both,
// not neither.
func (f *selectorFlag) args(cmd *cobra.Command, args []string) error {
	switch {
	case f.selector == "" && len(args) == 0:
		return usageErrorf("name at least one node, or choose nodes with -l/--selector")
	case f.selector != "" && len(args) > 0:
		return usageErrorf("give node names or -l/--selector %q, not both", f.selector)
	case f.selector != "":
		if _, err := labels.Parse(f.selector); err != nil {
			return usageErrorf("-l/--selector %q is not a label selector: %v", f.selector, err)
		}
	}
	return nil
}

// nodes are the named nodes (each once) or, with a selector, the matching nodes in name order. A
// selector that matches no node is an error: acting on nothing is never what was meant.
func (f *selectorFlag) nodes(ctx context.Context, s *session.Session, args []string) ([]string, error) {
	if f.selector == "" {
		return uniqueNodes(args), nil
	}
	list, err := s.Clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: f.selector})
	if err != nil {
		return nil, fmt.Errorf("listing the nodes matching -l %q: %w", f.selector, err)
	}
	if len(list.Items) == 0 {
		return nil, usageErrorf("-l %q matches no node: check the labels with oc get nodes --show-labels", f.selector)
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	sort.Strings(names)
	return names, nil
}
