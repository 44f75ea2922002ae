package mirrors

import (
	"context"
	"errors"
	"fmt"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
)

func init() { actions.Register(runMirrorsApply) }

// runMirrorsApply applies the cluster's rendered registries tree to the requested nodes, audited.
func runMirrorsApply(ctx context.Context, b actions.Backends, req request.MirrorsApply, sink event.Sink) error {
	if b.Mirrors == nil {
		return errors.New("the registry mirrors are not available here: no cluster to render them from")
	}
	if b.Hosts == nil {
		return errors.New("no SSH access to Windows hosts is configured: give wmcon an SSH key (the cloud-private-key secret or --ssh-key)")
	}
	if len(req.Nodes) == 0 {
		return errors.New("no node to apply the mirrors to")
	}
	tree, err := b.Mirrors(ctx)
	if err != nil {
		return err
	}
	nodes := make([]model.NodeInfo, 0, len(req.Nodes))
	for _, name := range req.Nodes {
		n, err := b.FindNode(ctx, name)
		if err != nil {
			return err
		}
		if !n.Windows {
			return fmt.Errorf("%s is not a Windows node: registry mirrors are for Windows nodes only", name)
		}
		nodes = append(nodes, n)
	}
	return MirrorsApply(ctx, b.Hosts, nodes, tree, MirrorsApplyOptions{Concurrency: req.Concurrency}, sink)
}

// MirrorsReport is the Mirrors pane's content: the rendered files (authorization headers masked) and each
// node's state against them.
func MirrorsReport(tree registries.Tree, sts []MirrorNodeStatus) model.MirrorsReport {
	rep := model.MirrorsReport{Warnings: tree.Warnings}
	for _, f := range tree.Files {
		mf := model.MirrorFile{Source: f.Source, Path: f.Path(), Server: f.Server, NeverContactSource: f.NeverContactSource,
			Content: f.Masked()}
		for _, m := range f.Mirrors {
			mf.Mirrors = append(mf.Mirrors, m.Repo.String())
		}
		rep.Files = append(rep.Files, mf)
	}
	for _, st := range sts {
		rep.Nodes = append(rep.Nodes, model.MirrorNodeState{Node: st.Node, State: string(st.State), Summary: st.Summary(),
			Missing: st.Missing, Differs: st.Differs, Extra: st.Extra})
	}
	return rep
}
