package cluster

import (
	"context"
	"errors"
	"net/http"
	"sync"
)

// ConnTracker watches the transport under every client: a request that fails to reach the server means
// the connection is lost, any response means it is back. client-go's reflectors retry refused watches
// quietly, so this is where a lost API server shows first.
type ConnTracker struct {
	mu       sync.Mutex
	lost     bool
	onChange func(connected bool, err error)
}

// Notify sets the function called on every change of state.
func (t *ConnTracker) Notify(f func(connected bool, err error)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onChange = f
}

// Wrap is a rest.Config.WrapTransport function.
func (t *ConnTracker) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		switch {
		case err == nil:
			t.set(false, nil)
		case errors.Is(err, context.Canceled) || r.Context().Err() != nil:
			// our own cancellation says nothing about the server
		default:
			t.set(true, err)
		}
		return resp, err
	})
}

func (t *ConnTracker) set(lost bool, err error) {
	t.mu.Lock()
	changed := t.lost != lost
	t.lost = lost
	f := t.onChange
	t.mu.Unlock()
	if changed && f != nil {
		f(!lost, err)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
