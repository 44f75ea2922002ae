package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/sim/operator"
	"github.com/wmcon/wmcon/sim/windows"
)

// operatorPayload is the synthetic payload the fresh demo's operator image carries, written once and
// removed by Close.
type operatorPayload struct {
	// parent holds it: the backend's private directory, so a process ended at once by a signal leaves
	// nothing in the temporary directory ("" = the temporary directory, a Cluster without a Backend).
	parent string
	once   sync.Once
	dir    string
	p      *payload.Payload
	err    error
}

func (o *operatorPayload) load(context.Context) (*payload.Payload, error) {
	o.once.Do(func() {
		o.dir, o.err = os.MkdirTemp(o.parent, "wmcon-demo-operator-payload-")
		if o.err != nil {
			return
		}
		files := filepath.Join(o.dir, "payload")
		names := nodeconfig.RequiredPayload("AWS")
		if o.err = payload.WriteSynthetic(files, names); o.err == nil {
			o.p, o.err = payload.LoadDir(files, filepath.Join(o.dir, "cache"))
		}
		if o.err != nil {
			o.err = fmt.Errorf("the demo operator's payload: %w", o.err)
		}
	})
	return o.p, o.err
}

func (o *operatorPayload) remove() {
	if o.dir != "" {
		_ = os.RemoveAll(o.dir)
	}
}

// operator is the fresh demo's WMCO stand-in once OLM installed it: its secret controller writes the user
// data, and its node controllers configure the Machines' instances and the windows-instances hosts into
// nodes, so the wizard's operator path ends in a Ready node as the standalone one does.
func (c *Cluster) operator() *operator.Operator {
	return &operator.Operator{Clients: c.Clients, Platform: "AWS", Nodes: &operator.NodeOptions{
		Host:    c.simHost,
		Payload: c.payload.load,
		Retry:   max(2*c.opts.Step, time.Second),
		Log:     c.opLog.add,
	}}
}

// simHost is the simulated Windows Server at an address: an unconfigured host or a Machine's instance.
func (c *Cluster) simHost(addr string) *windows.Host {
	if h := c.bare[addr]; h != nil {
		return h
	}
	if c.Machines != nil {
		return c.Machines.HostAt(addr)
	}
	return nil
}

// startOperatorPod plays the operator Deployment's ReplicaSet and kubelet on the fresh demo: once OLM has
// created the Deployment, its pod runs (so the operator's log can be read), until ctx ends.
func (c *Cluster) startOperatorPod(ctx context.Context) {
	t := time.NewTicker(max(c.opts.Step/2, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := c.kube.AppsV1().Deployments(config.OperatorNamespace).Get(ctx, config.OperatorName, metav1.GetOptions{}); err != nil {
			continue
		}
		_, err := c.kube.CoreV1().Pods(config.OperatorNamespace).Create(ctx, newOperatorPod(c.opts.Now()), metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return
		}
	}
}

// newOperatorPod is the operator's pod just started: running and ready, no restarts.
func newOperatorPod(now time.Time) *corev1.Pod {
	p := operatorPod(now)
	p.CreationTimestamp = metav1.NewTime(now)
	started := metav1.NewTime(now)
	p.Status.StartTime = &started
	p.Status.ContainerStatuses[0].RestartCount = 0
	p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{}
	return p
}
