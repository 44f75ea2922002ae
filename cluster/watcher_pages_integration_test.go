package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/fleet"
)

// The first list of Nodes arrives in batches (streamed from the server's watch cache, or in pages), and the
// console shows each as it comes; every Windows node is on screen before any other node arrives, every
// node appears once in every snapshot, and the synced snapshot holds exactly the server's nodes.
func TestNodesArrivePageByPage(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	const created, pageSize = 120, 10
	for i := range created {
		n := fleet.Node(i, fmt.Sprintf("paged-node-%03d", i), fmt.Sprintf("127.20.0.%d", i))
		if _, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
	}
	all, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, windows := map[string]bool{}, map[string]bool{}
	for _, n := range all.Items {
		want[n.Name] = true
		if n.Labels[config.OSLabel] == "windows" {
			windows[n.Name] = true
		}
	}
	for _, mode := range []struct {
		name string
		list cluster.NodeListMode
		asks string // how the first list asks for the Windows nodes
	}{
		{"stream", cluster.NodeListStream, "labelSelector=kubernetes.io%2Fos%3Dwindows&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"},
		{"pages", cluster.NodeListPages, "labelSelector=kubernetes.io%2Fos%3Dwindows&limit=10"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			partials, sent := watchNodesArrive(t, cluster.WatcherOptions{NodePageSize: pageSize, NodeList: mode.list}, want, windows)
			if partials == 0 {
				t.Fatalf("no snapshot showed the first batches before the whole list of %d nodes had arrived", len(want))
			}
			if !slices.ContainsFunc(sent, func(r string) bool { return strings.Contains(r, mode.asks) }) {
				t.Fatalf("no request asked for %s:\n%s", mode.asks, strings.Join(sent, "\n"))
			}
		})
	}
}

// watchNodesArrive runs a watcher until its Nodes have synced, checking every snapshot on the way, and
// returns how many showed part of the list.
func watchNodesArrive(t *testing.T, opts cluster.WatcherOptions, want, windows map[string]bool) (partials int, sent []string) {
	var mu sync.Mutex
	cfg := srv.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/api/v1/nodes") {
				mu.Lock()
				sent = append(sent, r.URL.RawQuery)
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	clients, err := cluster.NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	w := cluster.NewWatcher(clients, cluster.Target{Server: srv.AdminConfig().Host}, opts)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	deadline := time.After(time.Minute)
	for {
		var s *model.Snapshot
		select {
		case s = <-w.Snapshots():
		case <-deadline:
			t.Fatalf("the Nodes did not sync within a minute (%d partial snapshots seen)", partials)
		}
		seen, others := map[string]bool{}, 0
		for _, n := range s.Nodes {
			if seen[n.Name] {
				t.Fatalf("snapshot %d shows %s twice", s.Seq, n.Name)
			}
			seen[n.Name] = true
			if !windows[n.Name] {
				others++
			}
		}
		state := s.Resources[model.ResNodes]
		if state.Availability == model.Available {
			if len(seen) != len(want) {
				t.Fatalf("synced snapshot has %d nodes, the server %d", len(seen), len(want))
			}
			for name := range want {
				if !seen[name] {
					t.Fatalf("synced snapshot lacks %s", name)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			return partials, slices.Clone(sent)
		}
		if len(s.Nodes) == 0 || len(s.Nodes) >= len(want) {
			continue
		}
		partials++
		if !state.Partial || !strings.Contains(state.Message, "loading") {
			t.Fatalf("a snapshot with %d of %d nodes: state %+v", len(s.Nodes), len(want), state)
		}
		if others > 0 && len(seen)-others != len(windows) {
			t.Fatalf("a snapshot shows %d other nodes but only %d of the %d Windows nodes", others, len(seen)-others, len(windows))
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
