package session

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/wmcon/wmcon/model"
)

func planTargets(n, onScreen int) []model.MetricsTarget {
	out := make([]model.MetricsTarget, n)
	for i := range out {
		out[i] = model.MetricsTarget{Name: fmt.Sprintf("win-%04d", i), Windows: true, OnScreen: i < onScreen}
	}
	return out
}

func names(ts []model.MetricsTarget) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// The plan reads only rows on screen, a burst at most at once and scrapeRate a second after that, the
// least recently read first.
func TestScrapePlanReadsTheScreenWithinItsRate(t *testing.T) {
	now := time.Unix(0, 0)
	p := newScrapePlan(func() time.Time { return now })
	targets := planTargets(10000, 40)

	first, _ := p.pick(targets)
	assert.Len(t, first, scrapeBurst, "a burst at most")
	for _, tg := range first {
		assert.True(t, tg.OnScreen)
	}
	now = now.Add(30 * time.Second)
	second, _ := p.pick(targets)
	assert.Len(t, second, int(30*scrapeRate), "then scrapeRate a second")
	assert.NotContains(t, names(second), first[0].Name, "rows not yet read come before rows read")

	total := len(first) + len(second)
	for range 10 { // ten more minutes, a refresh every 30 s
		now = now.Add(30 * time.Second)
		got, _ := p.pick(targets)
		total += len(got)
	}
	elapsed := 11 * 30.0
	assert.LessOrEqual(t, float64(total), scrapeBurst+elapsed*scrapeRate, "never more than the rate on average")
}

// A node whose read the server refused (400: its address cannot be proxied; 403) is not read again at the
// next interval; another failure backs off too, and doubles.
func TestScrapePlanBacksOffAfterFailures(t *testing.T) {
	now := time.Unix(0, 0)
	p := newScrapePlan(func() time.Time { return now })
	targets := planTargets(3, 3)
	got, _ := p.pick(targets)
	assert.Len(t, got, 3)
	p.observe("win-0000", apierrors.NewBadRequest("address not allowed"))
	p.observe("win-0001", errors.New("connection refused"))
	p.observe("win-0002", nil)

	now = now.Add(20 * time.Second)
	got, waiting := p.pick(targets)
	assert.Equal(t, []string{"win-0002"}, names(got), "both failed nodes wait")
	assert.Contains(t, waiting["win-0000"], "address not allowed")
	assert.Contains(t, waiting["win-0000"], "read again in 5m0s")

	now = now.Add(20 * time.Second) // the plain failure's 30 s have passed, the refusal's 5 minutes have not
	got, _ = p.pick(targets)
	assert.Contains(t, names(got), "win-0001")
	assert.NotContains(t, names(got), "win-0000")
	p.observe("win-0001", errors.New("connection refused"))
	_, waiting = p.pick(targets)
	assert.Contains(t, waiting["win-0001"], "read again in 1m0s", "a second failure doubles the wait")

	now = now.Add(5 * time.Minute)
	got, _ = p.pick(targets)
	assert.Contains(t, names(got), "win-0000", "read again once the back-off has passed")
}
