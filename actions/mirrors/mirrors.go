// Package mirrors writes the registry mirrors (containerd's hosts.toml files rendered from the cluster's
// mirror sets) to Windows nodes, several at once, and reports which nodes are out of step.
package mirrors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
	"github.com/wmcon/wmcon/remote"
)

// Action names and steps of the mirror operations.
const (
	ActionMirrorsApply = request.ActionMirrorsApply
	StepWrite          = "write"
	StepReadBack       = "read-back"
)

// MirrorState is how a node's registries directory compares with the rendered tree.
type MirrorState string

const (
	MirrorsInStep    MirrorState = model.MirrorsInStep
	MirrorsOutOfStep MirrorState = model.MirrorsOutOfStep
	MirrorsUnknown   MirrorState = model.MirrorsUnknown // the host could not be read
)

// MirrorNodeStatus is one node's registries directory against the rendered tree.
type MirrorNodeStatus struct {
	Node    string      `json:"node"`
	State   MirrorState `json:"state"`
	Missing []string    `json:"missing,omitempty"` // files the node lacks
	Differs []string    `json:"differs,omitempty"` // files whose content differs
	Extra   []string    `json:"extra,omitempty"`   // files the node has that the tree does not
	Error   string      `json:"error,omitempty"`
}

// Compare says how the files read from a node differ from the wanted tree (paths relative to the registries
// directory; case-insensitive as NTFS).
func Compare(node string, want, got map[string][]byte) MirrorNodeStatus {
	st := MirrorNodeStatus{Node: node, State: MirrorsInStep}
	lower := map[string][]byte{}
	for p, b := range got {
		lower[strings.ToLower(p)] = b
	}
	seen := map[string]bool{}
	for p, b := range want {
		k := strings.ToLower(p)
		seen[k] = true
		have, ok := lower[k]
		switch {
		case !ok:
			st.Missing = append(st.Missing, p)
		case !bytes.Equal(have, b):
			st.Differs = append(st.Differs, p)
		}
	}
	for p := range got {
		if !seen[strings.ToLower(p)] {
			st.Extra = append(st.Extra, p)
		}
	}
	sort.Strings(st.Missing)
	sort.Strings(st.Differs)
	sort.Strings(st.Extra)
	if len(st.Missing)+len(st.Differs)+len(st.Extra) > 0 {
		st.State = MirrorsOutOfStep
	}
	return st
}

// Summary is the status in a few words.
func (s MirrorNodeStatus) Summary() string {
	switch s.State {
	case MirrorsInStep:
		return "in step"
	case MirrorsUnknown:
		return "unknown: " + s.Error
	}
	var parts []string
	for _, p := range []struct {
		what  string
		paths []string
	}{{"missing", s.Missing}, {"differs", s.Differs}, {"extra", s.Extra}} {
		if len(p.paths) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.paths, ", "))
		}
	}
	return "out of step: " + strings.Join(parts, "; ")
}

// MirrorsStatus reads every node's registries directory back over SSH, all nodes at once (at most
// concurrency), and compares it with the tree. A node that cannot be read is unknown, with the reason.
func MirrorsStatus(ctx context.Context, hosts actions.HostResolver, nodes []model.NodeInfo, tree registries.Tree, concurrency int) []MirrorNodeStatus {
	want := tree.Map()
	out := make([]MirrorNodeStatus, len(nodes))
	rollout.ForEach(ctx, len(nodes), concurrency, func(i int) {
		out[i] = mirrorStatus(ctx, hosts, nodes[i], want)
	})
	return out
}

func mirrorStatus(ctx context.Context, hosts actions.HostResolver, n model.NodeInfo, want map[string][]byte) MirrorNodeStatus {
	got, err := readRegistries(ctx, hosts, n)
	if err != nil {
		return MirrorNodeStatus{Node: n.Name, State: MirrorsUnknown, Error: err.Error()}
	}
	return Compare(n.Name, want, got)
}

func readRegistries(ctx context.Context, hosts actions.HostResolver, n model.NodeInfo) (map[string][]byte, error) {
	h, err := hosts.Host(ctx, n)
	if err != nil {
		return nil, err
	}
	got, _, err := h.ReadTree(ctx, config.RegistriesDir)
	return got, err
}

// MirrorsApplyOptions tune MirrorsApply.
type MirrorsApplyOptions struct {
	Concurrency int // nodes at once; 0 = rollout.DefaultConcurrency
	Replace     remote.ReplaceDirOptions
}

// MirrorsApply replaces the registries directory of every node with the tree, several nodes at once. Each
// node reports its own steps (write: the new tree staged and swapped in; verify: read back and compared)
// and finishes on its own: a node that fails or drops is reported with the state it was left in and the
// others carry on. Applying again converges. containerd reads hosts.toml on every pull, so nothing restarts.
func MirrorsApply(ctx context.Context, hosts actions.HostResolver, nodes []model.NodeInfo, tree registries.Tree,
	opts MirrorsApplyOptions, sink event.Sink) error {
	sink = event.Locked(sink)
	want := tree.Map()
	byName, names := model.NodesByName(nodes)
	ro := rollout.Rollout{MaxUnavailable: rollout.Concurrency(opts.Concurrency), ContinueOnFailure: true,
		NotStarted: func(node, why string) {
			r := event.Reporter{Sink: sink, Action: ActionMirrorsApply, Target: node}
			r.Finish(event.Cancelled, "not applied: "+why, "nothing changed on this node; "+event.Run("mirrors", "apply", node))
		}}
	return ro.Run(ctx, names, func(ctx context.Context, node string) error {
		return applyMirrors(ctx, hosts, byName[node], want, opts.Replace, sink)
	}).Err()
}

func applyMirrors(ctx context.Context, hosts actions.HostResolver, n model.NodeInfo, want map[string][]byte,
	ropts remote.ReplaceDirOptions, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: ActionMirrorsApply, Target: n.Name}
	start := time.Now()
	r.Started(StepWrite, fmt.Sprintf("writing %d hosts.toml files to %s", len(want), config.RegistriesDir))
	h, err := hosts.Host(ctx, n)
	if err == nil {
		ropts.Progress = func(s string) { r.Log(StepWrite, s) }
		err = h.ReplaceDir(ctx, config.RegistriesDir, want, ropts)
	}
	if err != nil {
		state, hint := writeFailureState(n.Name, err)
		r.Failed(StepWrite, err, hint)
		r.Finish(event.Failed, state, hint)
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	r.Done(StepWrite, "new directory swapped in")
	r.Started(StepReadBack, "reading the files back")
	got, _, err := h.ReadTree(ctx, config.RegistriesDir)
	if err != nil {
		hint := "the new files were swapped in but could not be read back: " + event.Run("mirrors", "status", n.Name)
		r.Failed(StepReadBack, err, hint)
		r.Finish(event.Failed, "applied, not verified", hint)
		return fmt.Errorf("%s: verify: %w", n.Name, err)
	}
	if st := Compare(n.Name, want, got); st.State != MirrorsInStep {
		err := errors.New(st.Summary())
		hint := "something else changed the directory meanwhile; apply again: " + cmdline.Wmcon("mirrors", "apply", n.Name)
		r.Failed(StepReadBack, err, hint)
		r.Finish(event.Failed, "read-back differs", hint)
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	r.Done(StepReadBack, fmt.Sprintf("%d files match", len(want)))
	r.Finish(event.Succeeded, fmt.Sprintf("registries in step in %s; containerd reads hosts.toml on every pull, no restart needed",
		time.Since(start).Round(time.Millisecond)), "")
	return nil
}

// writeFailureState says what a failed write left on the node.
func writeFailureState(node string, err error) (state, hint string) {
	again := "apply again when it is reachable: " + cmdline.Wmcon("mirrors", "apply", node)
	var inUse *remote.DirInUseError
	switch {
	case errors.As(err, &inUse):
		return "unchanged: the previous registries directory is still in place",
			"a process on the host holds a file in it open; retry: " + cmdline.Wmcon("mirrors", "apply", node)
	case errors.Is(err, remote.ErrConnectionLost), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "old or new directory, never a mix (the swap is all or nothing): check with " + cmdline.Wmcon("mirrors", "status", node), again
	}
	return "unchanged unless the swap ran: check with " + cmdline.Wmcon("mirrors", "status", node), again
}
