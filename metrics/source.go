package metrics

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wmcon/wmcon/model"
)

// Node is a node to read metrics for: its name and first IPv4 InternalIP (how a Prometheus target may
// name it).
type Node struct {
	Name string
	IP   string
}

// Source is where figures come from: each node's windows_exporter, or a Prometheus server.
type Source interface {
	// Name says where the numbers come from, for the user.
	Name() string
	// Refresh reads the current figures of nodes; a node that cannot be read is in the report's Errors.
	Refresh(ctx context.Context, nodes []Node) model.MetricsReport
	// NeedsTwoReads says a first Refresh has no rates (CPU %, network): the source counts itself.
	NeedsTwoReads() bool
}

// Scrape returns the /metrics text of one node's windows_exporter.
type Scrape func(ctx context.Context, node Node) ([]byte, error)

// ExporterSource reads each node's windows_exporter and derives rates from consecutive reads.
type ExporterSource struct {
	Via     string // how the exporter is reached, e.g. "the API server's node proxy"
	Scrape  Scrape
	Tracker *Tracker
	Now     func() time.Time // default time.Now
	// Parallel bounds concurrent scrapes (default 8), so a large fleet does not open a connection per node.
	Parallel int
	// Pods, when set, counts the running pods of every node (one read a refresh: windows_exporter does not
	// count pods). An error leaves the pods out of that refresh.
	Pods func(ctx context.Context) (map[string]int, error)
}

func (s *ExporterSource) Name() string        { return "windows_exporter via " + s.Via }
func (s *ExporterSource) NeedsTwoReads() bool { return true }

// Refresh scrapes every node once.
func (s *ExporterSource) Refresh(ctx context.Context, nodes []Node) model.MetricsReport {
	now, parallel := s.Now, s.Parallel
	if now == nil {
		now = time.Now
	}
	if parallel < 1 {
		parallel = 8
	}
	var pods map[string]int
	if s.Pods != nil {
		pods, _ = s.Pods(ctx) // the other figures do not wait for, or fail with, the count
	}
	figures := make([]*model.NodeMetrics, len(nodes))
	errs := make([]error, len(nodes))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			taken := now() // the scrape's start, as Prometheus stamps it
			text, err := s.Scrape(ctx, n)
			if err != nil {
				errs[i] = err
				return
			}
			sample, err := ParseExporter(bytes.NewReader(text), taken)
			if err != nil {
				errs[i] = err
				return
			}
			if pods != nil {
				sample.Pods = ptr(float64(pods[n.Name]))
			}
			m := s.Tracker.Observe(n.Name, sample)
			figures[i] = &m
		}()
	}
	wg.Wait()
	r := model.MetricsReport{Source: s.Name()}
	for i, n := range nodes {
		if errs[i] != nil {
			r.Errors = append(r.Errors, model.NodeError{Node: n.Name, Error: errs[i].Error()})
			continue
		}
		r.Nodes = append(r.Nodes, *figures[i])
	}
	return r
}

// Current reads once, and for a source that derives rates itself reads again after interval, so CPU %
// and throughput are known: what `wmcon top` prints.
func Current(ctx context.Context, src Source, nodes []Node, interval time.Duration) (model.MetricsReport, error) {
	r := src.Refresh(ctx, nodes)
	if !src.NeedsTwoReads() || len(r.Nodes) == 0 {
		return r, nil
	}
	select {
	case <-ctx.Done():
		return r, fmt.Errorf("metrics: %w", ctx.Err())
	case <-time.After(interval):
	}
	return src.Refresh(ctx, nodes), nil
}
