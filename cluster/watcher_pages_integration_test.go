package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/fleet"
)

// The first list of Nodes arrives in pages, and the console shows each page as it comes, saying how many
// more are loading; every node appears once in every snapshot, and the synced snapshot holds exactly the
// server's nodes.
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
	want := map[string]bool{}
	for _, n := range all.Items {
		want[n.Name] = true
	}

	clients, err := cluster.NewClients(srv.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	w := cluster.NewWatcher(clients, cluster.Target{Server: srv.AdminConfig().Host}, cluster.WatcherOptions{NodePageSize: pageSize})
	done := make(chan struct{})
	go func() { defer close(done); w.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	partials := 0
	deadline := time.After(time.Minute)
	for {
		var s *model.Snapshot
		select {
		case s = <-w.Snapshots():
		case <-deadline:
			t.Fatalf("the Nodes did not sync within a minute (%d partial snapshots seen)", partials)
		}
		seen := map[string]bool{}
		for _, n := range s.Nodes {
			if seen[n.Name] {
				t.Fatalf("snapshot %d shows %s twice", s.Seq, n.Name)
			}
			seen[n.Name] = true
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
			break
		}
		if len(s.Nodes) > 0 && len(s.Nodes) < len(want) {
			partials++
			if !state.Partial || len(s.Nodes)%pageSize != 0 {
				t.Fatalf("a snapshot with %d of %d nodes: state %+v", len(s.Nodes), len(want), state)
			}
			if more := fmt.Sprintf("%d more Nodes loading…", len(want)-len(s.Nodes)); !strings.Contains(state.Message, more) {
				t.Fatalf("with %d of %d nodes the message is %q, want %q", len(s.Nodes), len(want), state.Message, more)
			}
		}
	}
	if partials == 0 {
		t.Fatalf("no snapshot showed the first pages before the whole list of %d nodes had arrived", len(want))
	}
}
