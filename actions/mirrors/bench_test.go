package mirrors_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/mirrors"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

const benchNodes = 50

// benchFleet starts 50 simulated Windows hosts answering 50 ms late, connected once (the console keeps its
// connections), and two different registries trees, so every apply is a change.
func benchFleet(b *testing.B) (*actiontest.LogHosts, []model.NodeInfo, [2]registries.Tree) {
	b.Helper()
	hs := actiontest.NewLogHosts(b)
	var names []string
	for i := range benchNodes {
		name := fmt.Sprintf("bench-%02d", i)
		hs.Add(name, fmt.Sprintf("127.0.93.%d", 10+i)).SetLatency(actiontest.BenchLatency)
		names = append(names, name)
	}
	nodes := hs.Infos(names...)
	var trees [2]registries.Tree
	for i := range trees {
		tree, err := registries.Render(registries.Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{{
			ObjectMeta: metav1.ObjectMeta{Name: "bench"},
			Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: []configv1.ImageDigestMirrors{
				{Source: "mcr.microsoft.com/oss/kubernetes/pause", Mirrors: []configv1.ImageMirror{configv1.ImageMirror(fmt.Sprintf("mirror%d.corp:5000/oss/kubernetes/pause", i))}},
				{Source: "quay.io/openshift/release", Mirrors: []configv1.ImageMirror{configv1.ImageMirror(fmt.Sprintf("mirror%d.corp:5000/openshift/release", i))}},
			}}}}})
		if err != nil {
			b.Fatal(err)
		}
		trees[i] = tree
	}
	for _, st := range mirrors.MirrorsStatus(context.Background(), hs.Resolver, nodes, trees[0], 0) {
		if st.State == mirrors.MirrorsUnknown {
			b.Fatalf("%s: %s", st.Node, st.Error)
		}
	}
	return hs, nodes, trees
}

// BenchmarkMirrorsApply50Nodes applies a mirror change to 50 hosts with 50 ms of latency per round trip,
// at the default concurrency and one node at a time, in the same run; it reports both wall times and the
// ratio (target: at least 8× faster).
func BenchmarkMirrorsApply50Nodes(b *testing.B) {
	hs, nodes, trees := benchFleet(b)
	ctx := context.Background()
	sink := &event.TextSink{W: io.Discard}
	var parallel, serial time.Duration
	n := 0
	for b.Loop() {
		for _, run := range []struct {
			concurrency int
			total       *time.Duration
		}{{rollout.DefaultConcurrency, &parallel}, {1, &serial}} {
			start := time.Now()
			err := mirrors.MirrorsApply(ctx, hs.Resolver, nodes, trees[n%2], mirrors.MirrorsApplyOptions{Concurrency: run.concurrency}, sink)
			*run.total += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	runs := float64(n / 2)
	b.ReportMetric(parallel.Seconds()/runs, "s/apply-default")
	b.ReportMetric(serial.Seconds()/runs, "s/apply-one-at-a-time")
	b.ReportMetric(serial.Seconds()/parallel.Seconds(), "x-faster")
}

// BenchmarkMirrorsStatus50Nodes reads the registries directory of 50 hosts back (50 ms per round trip) and
// compares it with the tree, as `wmcon mirrors status` does.
func BenchmarkMirrorsStatus50Nodes(b *testing.B) {
	hs, nodes, trees := benchFleet(b)
	ctx := context.Background()
	for b.Loop() {
		for _, st := range mirrors.MirrorsStatus(ctx, hs.Resolver, nodes, trees[0], 0) {
			if st.State == mirrors.MirrorsUnknown {
				b.Fatalf("%s: %s", st.Node, st.Error)
			}
		}
	}
}
