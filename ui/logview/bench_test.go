package logview

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
)

func benchLine(i int) logline.Line {
	return logline.Line{Node: "win-a", Service: "kubelet", Source: logline.SourceAPI, Level: logline.LevelInfo, Seq: uint64(i + 1),
		Text: fmt.Sprintf(`I0304 05:06:07.%06d    2856 kubelet.go:2421] "SyncLoop (PLEG): event for pod" pod="openshift-monitoring/node-exporter-win" n=%d`, i%1000000, i)}
}

// BenchmarkSustainedLines measures lines per second going from a producer through a Stream into the
// view, rendering the screen once per batch as the program would, and checks that nothing was lost.
func BenchmarkSustainedLines(b *testing.B) {
	const perOp, batch = 10000, 64
	total := b.N * perOp
	feed := func(ctx context.Context, _ logline.Request, out func([]logline.Line), _ event.Sink) error {
		for i := 0; i < total; i += batch {
			lines := make([]logline.Line, min(batch, total-i))
			for j := range lines {
				lines[j] = benchLine(i + j)
			}
			out(lines)
		}
		return nil
	}
	m := New(Options{Request: logline.Request{Nodes: nodes("win-a"), Follow: true}, Start: feed, Capacity: logline.DefaultBufferLines})
	m.SetSize(160, 50)
	b.ResetTimer()
	cmd := m.Init()
	for cmd != nil {
		m, cmd = m.Update(cmd())
		_ = m.View()
	}
	b.StopTimer()
	got := m.Buffer().Total() + m.stream.Skipped()
	if got != uint64(total) || m.Buffer().At(m.Buffer().Len()-1).Seq != uint64(total) {
		b.Fatalf("lines lost: %d of %d arrived", got, total)
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkRenderFullBuffer is one frame of a full default-size buffer with a search highlighted.
func BenchmarkRenderFullBuffer(b *testing.B) {
	m := New(Options{Request: logline.Request{Nodes: nodes("win-a", "win-b")}})
	m.SetSize(160, 50)
	for i := range logline.DefaultBufferLines {
		m.Append(benchLine(i))
	}
	m.search = "pleg"
	b.ResetTimer()
	for range b.N {
		_ = m.View()
	}
}

// BenchmarkFilterKeystroke re-filters a full default-size buffer (what accepting a fuzzy filter costs).
func BenchmarkFilterKeystroke(b *testing.B) {
	m := New(Options{Request: logline.Request{Nodes: nodes("win-a")}})
	for i := range logline.DefaultBufferLines {
		m.Append(benchLine(i))
	}
	b.ResetTimer()
	for range b.N {
		_ = m.filter.set(m.buf, "nodeexp", false)
	}
}

// BenchmarkHeapAtBound reports the heap a view holds with its buffer full (default bound, typical
// kubelet lines of ~130 bytes).
func BenchmarkHeapAtBound(b *testing.B) {
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := New(Options{Request: logline.Request{Nodes: nodes("win-a")}})
		for i := range 3 * logline.DefaultBufferLines {
			m.Append(benchLine(i))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if m.Buffer().Len() != logline.DefaultBufferLines {
			b.Fatal("buffer not at its bound")
		}
		held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		b.ReportMetric(held/(1<<20), "MiB")
		b.ReportMetric(held/float64(logline.DefaultBufferLines), "B/line")
		runtime.KeepAlive(m)
	}
}
