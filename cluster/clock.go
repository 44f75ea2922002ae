package cluster

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// Clock limits: how far a host's clock may be from the API server's before a kubelet it starts cannot join.
//   - Ahead: wmcon approves a client CSR only when it was created after the kubelet wrote its key, by the
//     key file's time on the host (CSRClockSkew); a host further ahead has its own kubelet's CSR refused.
//   - Behind: kube-controller-manager backdates the certificates it signs by 5 minutes; a host further
//     behind holds certificates that are not valid yet by its own clock.
const (
	MaxHostAhead  = CSRClockSkew
	MaxHostBehind = 5 * time.Minute
)

// ServerTime is the API server's clock: the Date header of a GET /version (whole seconds), and the
// request's round trip (the header was written somewhere within it). The demo's API server runs in this
// process, so its clock is this process's.
func (o *Ops) ServerTime(ctx context.Context) (time.Time, time.Duration, error) {
	if o.c.REST == nil {
		return time.Now(), 0, nil
	}
	client, err := rest.HTTPClientFor(o.c.REST)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("read the API server's clock: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(o.c.REST)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("read the API server's clock: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.JoinPath("version").String(), nil)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("read the API server's clock: %w", err)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("read the API server's clock: %w", err)
	}
	resp.Body.Close()
	rtt := time.Since(start)
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("read the API server's clock: GET /version answered %s without a usable Date header", resp.Status)
	}
	// The header is cut to the second: the server's clock read anywhere in [date, date+1s).
	return date.Add(500 * time.Millisecond), rtt, nil
}

// ClockSkewError says a host's clock is too far from the API server's for its kubelet to join.
type ClockSkewError struct {
	Host  string
	Skew  time.Duration // host minus API server: positive is ahead
	Limit time.Duration
}

func (e *ClockSkewError) Error() string {
	dir, why := "ahead of", "wmcon would refuse its kubelet's CSR as older than the kubelet's key"
	skew := e.Skew
	if skew < 0 {
		dir, why, skew = "behind", "the certificates the cluster signs for its kubelet would not be valid yet on it", -skew
	}
	return fmt.Sprintf("%s's clock is %s %s the API server's (at most %s allowed): %s; set the host's time "+
		"(w32tm /resync, or the time source of its platform) and run again", e.Host, skew.Round(time.Second), dir,
		e.Limit, why)
}

// CheckClockSkew decides whether a host's clock is close enough to the API server's. uncertainty is how
// far the measurement itself may be off (round trips, the Date header's whole seconds): a skew is refused
// only when it is beyond the limit by more than that, so a good host is never refused for a slow network.
func CheckClockSkew(host string, hostTime, serverTime time.Time, uncertainty time.Duration) error {
	skew := hostTime.Sub(serverTime)
	switch {
	case skew > MaxHostAhead+uncertainty:
		return &ClockSkewError{Host: host, Skew: skew, Limit: MaxHostAhead}
	case -skew > MaxHostBehind+uncertainty:
		return &ClockSkewError{Host: host, Skew: skew, Limit: MaxHostBehind}
	}
	return nil
}
