package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/view"
)

// fixtureNodeDetail is what cluster.NodeDetail reads of a node: its pods (one crash-looping), events (a
// warning from the node, one from its Machine) and a long YAML.
func fixtureNodeDetail(_ context.Context, node string) (model.NodeDetail, error) {
	var yaml strings.Builder
	fmt.Fprintf(&yaml, "apiVersion: v1\nkind: Node\nmetadata:\n  annotations:\n    windowsmachineconfig.openshift.io/username: (masked)\n  name: %s\nstatus:\n  addresses:\n", node)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&yaml, "  - address: 127.0.45.%d\n    type: InternalIP\n", i)
	}
	return model.NodeDetail{Node: node, Read: fixedNow,
		Pods: []model.PodInfo{
			{Namespace: "openshift-monitoring", Name: "windows-exporter-x7k2m", Phase: "Running", Ready: 1, Total: 1, Owner: "DaemonSet", Created: ago(2 * day)},
			{Namespace: "windows-apps", Name: "iis-7d9f8b-2xq4z", Phase: "Running", Reason: "CrashLoopBackOff", Ready: 0, Total: 1, Restarts: 14, Owner: "ReplicaSet", Created: ago(3 * time.Hour)},
		},
		Events: []model.EventInfo{
			{Time: ago(5 * time.Minute), Type: "Warning", Reason: "NodeNotReady", Message: "Node is not ready", Object: "Node/" + node, Count: 2},
			{Time: ago(2 * day), Type: "Normal", Reason: "Updated", Message: "Updated Machine", Object: "Machine/openshift-machine-api/win-b-h2kfs"},
		},
		YAML: yaml.String()}, nil
}

// openDetail opens the details of the third node (the drifted Windows node) and delivers what it read.
func openDetail(t *testing.T, read view.NodeDetailFunc, w, h int) Model {
	t.Helper()
	opts := testOptions()
	opts.NodeDetail = read
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: w, Height: h}, snapshotMsg{fixtureSnapshot()})
	m = update(m, press("j", "j")...)
	next, cmd := m.Update(keyPress("enter"))
	m = next.(Model)
	require.True(t, isTop[*detailView](m))
	require.NotNil(t, cmd, "opening a node's details reads its pods, events and YAML")
	return update(m, cmd())
}

func TestNodeDetailShowsPodsEventsAndResources(t *testing.T) {
	m := openDetail(t, fixtureNodeDetail, 160, 80)
	s := screen(m)
	for _, want := range []string{
		"Resources", "cpu                  4            3500m", "pods                 250          250",
		"Pods (2)", "openshift-monitoring/windows-exporter-x7k2m", "1/1", "DaemonSet",
		"windows-apps/iis-7d9f8b-2xq4z", "CrashLoopBackOff", "14",
		"Events", "NodeNotReady", "Node is not ready  (2 times)", "(Machine/openshift-machine-api/win-b-h2kfs)",
	} {
		assert.Contains(t, s, want)
	}
	assert.Less(t, strings.Index(s, "Pods (2)"), strings.Index(s, "Labels"), "pods and events come before labels and annotations")
}

func TestNodeDetailYAMLToggleAndScrollIndicator(t *testing.T) {
	m := openDetail(t, fixtureNodeDetail, 100, 30)
	s := screen(m)
	assert.Regexp(t, `lines 1-\d+ of \d+, more below`, s, "a page longer than the screen says so")

	m = update(m, press("y")...)
	s = screen(m)
	assert.Contains(t, s, "(YAML, read-only)")
	assert.Contains(t, s, "kind: Node")
	assert.Contains(t, s, "username: (masked)")
	assert.Regexp(t, `lines 1-\d+ of \d+, more below`, s)
	m = update(m, press("end")...)
	assert.Regexp(t, `lines \d+-(\d+) of \d+, more above`, screen(m))
	assert.NotContains(t, screen(m), "more below")

	m = update(m, press("esc")...)
	require.True(t, isTop[*detailView](m), "esc leaves the YAML for the details first")
	assert.NotContains(t, screen(m), "(YAML")
	m = update(m, press("esc")...)
	assert.True(t, onList(m))
}

func TestNodeDetailReadFailureAndRetry(t *testing.T) {
	calls := 0
	read := func(ctx context.Context, node string) (model.NodeDetail, error) {
		calls++
		if calls == 1 {
			return model.NodeDetail{}, errors.New("nodes \"x\" is forbidden")
		}
		return fixtureNodeDetail(ctx, node)
	}
	m := openDetail(t, read, 160, 80)
	s := screen(m)
	assert.Contains(t, s, "cannot read them: nodes \"x\" is forbidden (r reads again)")
	assert.Contains(t, s, "Conditions", "the snapshot's part is still shown")
	next, cmd := m.Update(keyPress("r"))
	require.NotNil(t, cmd)
	m = update(next.(Model), cmd())
	assert.Contains(t, screen(m), "Pods (2)")
	assert.Equal(t, 2, calls)
}

// A short page has no scroll indicator, and without a reader (no NodeDetail) the page has no y or r.
func TestNodeDetailWithoutAReader(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, press("j", "j", "enter")...)
	s := screen(m)
	assert.NotContains(t, s, "Pods")
	assert.NotContains(t, s, "yaml")
	m = update(m, press("y")...)
	assert.NotContains(t, screen(m), "(YAML")
}
