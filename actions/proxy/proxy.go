// Package proxy writes the cluster-wide proxy to Windows nodes (machine variables and the trusted CA
// bundle), reports which nodes are out of step, and offers the reboot their services need to see it.
package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/reboot"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// Action names and steps of the proxy operations.
const (
	ActionProxySync = request.ActionProxySync
	StepEnv         = "environment"
	StepCABundle    = "ca-bundle"
)

// ProxyVar and ProxyNodeStatus are the model's (the console shows them too); the CA bundle states with them.
type (
	ProxyVar        = model.ProxyVar
	ProxyNodeStatus = model.ProxyNodeStatus
)

// CA bundle states.
const (
	CAInStep     = model.CAInStep
	CADiffers    = model.CADiffers
	CAMissing    = model.CAMissing
	CAUnexpected = model.CAUnexpected
	CANone       = model.CANone
)

// ProxyStatus reads every node's proxy variables (machine scope, that is HKLM\SYSTEM\CurrentControlSet\
// Control\Session Manager\Environment) and the hash of C:\k\ca-bundle.crt, all nodes at once.
func ProxyStatus(ctx context.Context, hosts actions.HostResolver, nodes []model.NodeInfo, want model.Proxy, concurrency int) []ProxyNodeStatus {
	out := make([]ProxyNodeStatus, len(nodes))
	rollout.ForEach(ctx, len(nodes), concurrency, func(i int) {
		out[i] = proxyStatus(ctx, hosts, nodes[i], want)
	})
	return out
}

func proxyStatus(ctx context.Context, hosts actions.HostResolver, n model.NodeInfo, want model.Proxy) ProxyNodeStatus {
	st := ProxyNodeStatus{Node: n.Name}
	h, err := hosts.Host(ctx, n)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	env := want.Env()
	for _, name := range model.ProxyVariables {
		have, err := h.GetEnv(ctx, name)
		if err != nil {
			return ProxyNodeStatus{Node: n.Name, Error: err.Error()}
		}
		// Shown masked everywhere (text, JSON, the console): a proxy URL may carry a password.
		v := ProxyVar{Name: name, Want: model.RedactURL(env[name]), Have: model.RedactURL(have), Drift: have != env[name]}
		st.Drift = st.Drift || v.Drift
		st.Vars = append(st.Vars, v)
	}
	hash, err := h.FileHash(ctx, config.CABundlePath)
	if err != nil {
		return ProxyNodeStatus{Node: n.Name, Error: err.Error()}
	}
	st.CABundle = caState(want.TrustedCA, hash)
	st.Drift = st.Drift || (st.CABundle != CAInStep && st.CABundle != CANone)
	return st
}

func caState(want []byte, hostHash string) string {
	switch {
	case len(want) == 0 && hostHash == "":
		return CANone
	case len(want) == 0:
		return CAUnexpected
	case hostHash == "":
		return CAMissing
	case strings.EqualFold(hostHash, sha256Hex(want)):
		return CAInStep
	}
	return CADiffers
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ProxySyncOptions tune ProxySync.
type ProxySyncOptions struct {
	Concurrency int
}

// ProxySync writes the cluster's proxy to each node: variables set or deleted to match, the CA bundle
// replaced (written beside it and renamed into place) or removed. Each node finishes on its own. It returns
// the nodes that changed: running services only see new machine variables after a reboot, which the caller
// offers (Ask with event.ChoiceLater / event.ChoiceReboot).
func ProxySync(ctx context.Context, hosts actions.HostResolver, nodes []model.NodeInfo, want model.Proxy, opts ProxySyncOptions,
	sink event.Sink) (changed []string, err error) {
	sink = event.Locked(sink)
	byName, names := model.NodesByName(nodes)
	var mu sync.Mutex
	did := map[string]bool{}
	ro := rollout.Rollout{MaxUnavailable: rollout.Concurrency(opts.Concurrency), ContinueOnFailure: true,
		NotStarted: func(node, why string) {
			r := event.Reporter{Sink: sink, Action: ActionProxySync, Target: node}
			r.Finish(event.Cancelled, "not synced: "+why, "nothing changed on this node; "+event.Run("proxy", "sync", node))
		}}
	sum := ro.Run(ctx, names, func(ctx context.Context, node string) error {
		changed, err := syncProxy(ctx, hosts, byName[node], want, sink)
		mu.Lock()
		did[node] = changed
		mu.Unlock()
		return err
	})
	for _, n := range names {
		if did[n] {
			changed = append(changed, n)
		}
	}
	return changed, sum.Err()
}

func syncProxy(ctx context.Context, hosts actions.HostResolver, n model.NodeInfo, want model.Proxy, sink event.Sink) (bool, error) {
	r := event.Reporter{Sink: sink, Action: ActionProxySync, Target: n.Name}
	start := time.Now()
	h, err := hosts.Host(ctx, n)
	if err != nil {
		r.Failed(StepEnv, err, "nothing changed; sync again when the host is reachable: "+cmdline.Wmcon("proxy", "sync", n.Name))
		r.Finish(event.Failed, "unchanged", cmdline.Wmcon("proxy", "sync", n.Name))
		return false, fmt.Errorf("%s: %w", n.Name, err)
	}
	r.Started(StepEnv, "machine environment variables")
	envChanged, err := syncEnv(ctx, h, want, r)
	if err != nil {
		hint := "some variables may be written; sync again: " + cmdline.Wmcon("proxy", "sync", n.Name)
		r.Failed(StepEnv, err, hint)
		r.Finish(event.Failed, "variables partly written", hint)
		return envChanged, fmt.Errorf("%s: %w", n.Name, err)
	}
	r.Done(StepEnv, changedWord(envChanged))
	r.Started(StepCABundle, config.CABundlePath)
	caChanged, err := syncCABundle(ctx, h, want.TrustedCA)
	if err != nil {
		hint := "variables are in step, the CA bundle is not; sync again: " + cmdline.Wmcon("proxy", "sync", n.Name)
		r.Failed(StepCABundle, err, hint)
		r.Finish(event.Failed, "CA bundle not written", hint)
		return envChanged, fmt.Errorf("%s: %w", n.Name, err)
	}
	r.Done(StepCABundle, changedWord(caChanged))
	changed := envChanged || caChanged
	msg := "already in step"
	if changed {
		msg = fmt.Sprintf("in step in %s; services see the change after a reboot", time.Since(start).Round(time.Millisecond))
	}
	r.Finish(event.Succeeded, msg, "")
	return changed, nil
}

func changedWord(changed bool) string {
	if changed {
		return "updated"
	}
	return "unchanged"
}

func syncEnv(ctx context.Context, h remote.Environment, want model.Proxy, r event.Reporter) (bool, error) {
	changed := false
	env := want.Env()
	for _, name := range model.ProxyVariables {
		have, err := h.GetEnv(ctx, name)
		if err != nil {
			return changed, err
		}
		if have == env[name] {
			continue
		}
		if env[name] == "" {
			err = h.RemoveEnv(ctx, name)
			r.Log(StepEnv, name+" deleted")
		} else {
			err = h.SetEnv(ctx, name, env[name])
			r.Log(StepEnv, fmt.Sprintf("%s = %s", name, model.RedactURL(env[name])))
		}
		if err != nil {
			return changed, fmt.Errorf("%s: %w", name, err)
		}
		changed = true
	}
	return changed, nil
}

// caBundleFiles is what keeping the trusted CA bundle in step needs from the host.
type caBundleFiles interface {
	FileHash(ctx context.Context, path string) (string, error)
	Remove(ctx context.Context, path string, recurse bool) error
	Upload(ctx context.Context, files []remote.Upload, opts remote.UploadOptions) (remote.UploadReport, error)
}

func syncCABundle(ctx context.Context, h caBundleFiles, want []byte) (bool, error) {
	hash, err := h.FileHash(ctx, config.CABundlePath)
	if err != nil {
		return false, err
	}
	switch caState(want, hash) {
	case CAInStep, CANone:
		return false, nil
	case CAUnexpected:
		return true, h.Remove(ctx, config.CABundlePath, false)
	}
	_, err = h.Upload(ctx, []remote.Upload{{Remote: config.CABundlePath, Data: want}}, remote.UploadOptions{Force: true})
	return true, err
}

func init() { actions.Register(runProxySync) }

// runProxySync syncs the cluster's proxy to the requested Windows nodes (all of them when none is named),
// then offers the changed nodes the graceful reboot; it reports in the same run, so one sink (and one audit
// point) sees both.
func runProxySync(ctx context.Context, b actions.Backends, req request.ProxySync, sink event.Sink) error {
	if b.Proxy == nil {
		return errors.New("the cluster proxy is not available here: no cluster to read it from")
	}
	if b.Hosts == nil {
		return errors.New("no SSH access to Windows hosts is configured: give wmcon an SSH key (the cloud-private-key secret or --ssh-key)")
	}
	nodes, err := windowsNodes(ctx, b, req.Nodes)
	if err != nil {
		return err
	}
	want, err := b.Proxy(ctx)
	if err != nil {
		return err
	}
	changed, err := ProxySync(ctx, b.Hosts, nodes, want, ProxySyncOptions{}, sink)
	if err != nil {
		return err
	}
	choice, err := OfferReboot(ctx, sink, changed)
	if err != nil || choice != event.ChoiceReboot {
		if err == nil && len(changed) > 0 {
			r := event.Reporter{Sink: sink, Action: ActionProxySync, Target: strings.Join(changed, ",")}
			r.Log(StepEnv, "services see the new settings after a reboot: "+cmdline.Wmcon(append([]string{"reboot"}, changed...)...))
		}
		return err
	}
	return reboot.Run(ctx, b, request.Reboot{Nodes: changed, Drain: req.Drain, MaxUnavailable: req.MaxUnavailable}, sink)
}

// windowsNodes looks the named Windows nodes up, or lists them all when none is named.
func windowsNodes(ctx context.Context, b actions.Backends, names []string) ([]model.NodeInfo, error) {
	if len(names) == 0 {
		if b.Snapshot == nil {
			return nil, errors.New("name the Windows nodes: there is no snapshot of the cluster to list them from")
		}
		snap, err := b.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		nodes := snap.WindowsNodes()
		if len(nodes) == 0 {
			return nil, errors.New("the cluster has no Windows nodes")
		}
		return nodes, nil
	}
	out := make([]model.NodeInfo, 0, len(names))
	for _, name := range names {
		n, err := b.FindNode(ctx, name)
		if err != nil {
			return nil, err
		}
		if !n.Windows {
			return nil, fmt.Errorf("%s is not a Windows node: the proxy is synced to Windows nodes only", name)
		}
		out = append(out, n)
	}
	return out, nil
}

// OfferReboot asks whether to reboot the nodes a sync changed; the answer is event.ChoiceLater or event.ChoiceReboot.
func OfferReboot(ctx context.Context, sink event.Sink, changed []string) (string, error) {
	if len(changed) == 0 {
		return event.ChoiceLater, nil
	}
	r := event.Reporter{Sink: sink, Action: ActionProxySync, Target: strings.Join(changed, ",")}
	return r.Ask(ctx, event.Question{
		Title:  fmt.Sprintf("Reboot %d node(s) so their services use the new proxy settings?", len(changed)),
		Detail: append([]string{"graceful reboot: cordon, drain (PodDisruptionBudgets respected), restart, uncordon"}, changed...),
		Choices: []event.Choice{{Key: event.ChoiceLater, Label: "later (wmcon reboot NODE…)"},
			{Key: event.ChoiceReboot, Label: "reboot now, one at a time (--max-unavailable)"}},
	})
}
