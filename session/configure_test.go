package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/sim/demo"
)

// The demo's unconfigured Windows host, configured as the console does it (request.Configure with Confirm,
// through the session's Runner): the question shows the plan, and once applied the host's honest kubelet
// joins the demo — the Node appears in the console's snapshots and turns Ready, labelled as WMCO labels it.
// The host is an AWS instance: its node is named as AWS's cloud provider knows it (WMCO's HOSTNAME_OVERRIDE),
// not by its NetBIOS name; it ends with WMCO's network configuration (kube-proxy running with its source
// VIP, the CNI configuration the runtime needs for Ready) and the cluster's mirror files, as mirrors render
// writes them.
func TestDemoBareHostConfiguredFromTheConsoleJoins(t *testing.T) {
	ctx, s := openDemo(t, 3*time.Minute)
	bare := demoOf(s).Bare
	node := bare.NodeName()
	require.NotEqual(t, strings.ToLower(bare.Hostname()), node, "an AWS host's NetBIOS name is not its node's")
	snap, err := s.Snapshot(ctx)
	require.NoError(t, err)
	_, isNode := snap.NodeByAddress(demo.BareHostIP)
	require.False(t, isNode, "the bare host is not a node yet")

	sink := &answering{answer: event.ChoiceApply}
	err = s.Runner.Run(ctx, request.Configure{Address: demo.BareHostIP, Confirm: true}, sink)
	require.NoError(t, err, sink.text())
	require.Len(t, sink.questions, 1, "one confirmation, with the plan")
	plan := strings.Join(sink.questions[0].Detail, "\n")
	assert.Contains(t, sink.questions[0].Title, demo.BareHostIP)
	assert.Contains(t, plan, `create kubelet`, "the confirmation shows the plan")
	assert.Contains(t, sink.text(), node+" is a Ready worker node")

	deadline := time.After(30 * time.Second)
	for {
		snap := s.Watcher.Current()
		// Labelled BYOH (a host given by address) and Ready, as the console shows it.
		if n, ok := snap.Node(node); ok && n.Status == model.NodeReady && n.BYOH {
			assert.True(t, n.Windows)
			assert.Equal(t, demo.BareHostIP, n.InternalIP)
			break
		}
		select {
		case <-deadline:
			t.Fatalf("the console never showed %s Ready:\n%s", node, sink.text())
		case <-s.Watcher.Snapshots():
		}
	}
	owner, err := s.Runner.Backends.Configure.Cluster.WMCOOwner(ctx, demo.BareHostIP, node)
	require.NoError(t, err)
	assert.Empty(t, owner, "the operator does not own it")

	assert.True(t, bare.ServiceRunning("kube-proxy"), "kube-proxy runs: its configuration has the source VIP")
	kp, err := bare.ReadFile(nodeconfig.KubeProxyConfPath)
	require.NoError(t, err)
	assert.Contains(t, string(kp), "sourceVip: 127.")
	assert.True(t, bare.CNINetworkReady(), "the runtime's network is configured")
	nf, err := cluster.NewOps(s.Clients).ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: true})
	require.NoError(t, err)
	require.NotEmpty(t, nf.Facts.Registries)
	for rel, want := range nf.Facts.Registries {
		got, err := bare.ReadFile(nodeconfig.RegistriesDir + `\` + rel)
		require.NoError(t, err, rel)
		assert.Equal(t, string(want), string(got), "%s as mirrors render writes it", rel)
	}
}

// answering records events and answers every question with answer.
type answering struct {
	answer    string
	events    []event.Event
	questions []event.Question
}

func (a *answering) Emit(e event.Event) { a.events = append(a.events, e) }

func (a *answering) Ask(_ context.Context, q event.Question) (string, error) {
	a.questions = append(a.questions, q)
	return a.answer, nil
}

func (a *answering) text() string {
	var b strings.Builder
	for _, e := range a.events {
		b.WriteString("[" + e.Step + "] " + e.Message + "\n")
	}
	return b.String()
}
