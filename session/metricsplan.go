package session

import (
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/wmcon/wmcon/model"
)

// scrapePlan decides which nodes a refresh reads when every read is a request of its own (a node's
// exporter through the API server's node proxy, or over SSH): only the rows on screen and the selected
// node, never more on average than scrapeRate a second (the least recently read first), and not a node
// whose last read failed until its back-off has passed. A console left open on a fleet of 10,000 nodes
// must not scrape thousands of exporters through the API server every interval.
type scrapePlan struct {
	now func() time.Time

	mu     sync.Mutex
	tokens float64
	filled time.Time
	read   map[string]time.Time // when each node was last read
	failed map[string]backoff   // nodes whose last read failed
}

type backoff struct {
	until time.Time
	wait  time.Duration
	err   string
}

// The plan's limits: about one request every two seconds on average, a screenful at most at once.
const (
	scrapeRate  = 0.5
	scrapeBurst = 16
	// A failed read waits before the next; each failure doubles the wait, up to maxBackoff. An answer the
	// server gave on purpose (400: the address cannot be proxied; 403; 404) starts at refusedBackoff:
	// asking again each interval would get the same answer.
	firstBackoff   = 30 * time.Second
	refusedBackoff = 5 * time.Minute
	maxBackoff     = 15 * time.Minute
)

func newScrapePlan(now func() time.Time) *scrapePlan {
	if now == nil {
		now = time.Now
	}
	return &scrapePlan{now: now, tokens: scrapeBurst, filled: now(), read: map[string]time.Time{}, failed: map[string]backoff{}}
}

// pick returns the targets to read now, in order of their last read (never read first), and the nodes on
// screen left out because their last read failed, with that error.
func (p *scrapePlan) pick(targets []model.MetricsTarget) (now []model.MetricsTarget, waiting map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	p.tokens = min(scrapeBurst, p.tokens+t.Sub(p.filled).Seconds()*scrapeRate)
	p.filled = t
	waiting = map[string]string{}
	var due []model.MetricsTarget
	for _, tg := range targets {
		if !tg.OnScreen {
			continue
		}
		if b, ok := p.failed[tg.Name]; ok && t.Before(b.until) {
			waiting[tg.Name] = b.err
			continue
		}
		due = append(due, tg)
	}
	sort.SliceStable(due, func(a, b int) bool { return p.read[due[a].Name].Before(p.read[due[b].Name]) })
	n := min(len(due), int(p.tokens))
	p.tokens -= float64(n)
	for _, tg := range due[:n] {
		p.read[tg.Name] = t
	}
	return due[:n], waiting
}

// observe records how a read of node ended.
func (p *scrapePlan) observe(node string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		delete(p.failed, node)
		return
	}
	b := p.failed[node]
	switch {
	case b.wait > 0:
		b.wait = min(2*b.wait, maxBackoff)
	case apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		b.wait = refusedBackoff
	default:
		b.wait = firstBackoff
	}
	b.until = p.now().Add(b.wait)
	b.err = err.Error() + " (read again in " + b.wait.String() + ")"
	p.failed[node] = b
}

// forget drops what the plan knows of nodes no longer listed.
func (p *scrapePlan) forget(keep map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for n := range p.read {
		if !keep[n] {
			delete(p.read, n)
		}
	}
	for n := range p.failed {
		if !keep[n] {
			delete(p.failed, n)
		}
	}
}
