package session

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/backend"
	"github.com/wmcon/wmcon/cluster"
)

// unreachable is a backend whose cluster cannot be reached; it records whether it was closed.
type unreachable struct{ closed bool }

func (*unreachable) Connect(context.Context) (cluster.Clients, cluster.Target, error) {
	return cluster.Clients{}, cluster.Target{}, errors.New("the cluster does not answer")
}
func (*unreachable) Run(context.Context)           {}
func (u *unreachable) Close()                      { u.closed = true }
func (*unreachable) User(context.Context) string   { return "" }
func (*unreachable) Sandbox() backend.Sandbox      { return backend.Sandbox{} }
func (*unreachable) HostAddrs() map[string]string  { return nil }
func (*unreachable) Exporters() *backend.Exporters { return nil }
func (*unreachable) PayloadDir() (string, error)   { return "", nil }

// The session owns its backend: when it cannot start, it closes the backend (a demo's simulated hosts and
// throwaway files would stay behind otherwise).
func TestNewClosesTheBackendItCannotStart(t *testing.T) {
	b := &unreachable{}
	_, err := New(context.Background(), Options{Backend: b})
	require.ErrorContains(t, err, "the cluster does not answer")
	assert.True(t, b.closed, "the backend was closed")
}

func TestNewNeedsABackend(t *testing.T) {
	_, err := New(context.Background(), Options{})
	assert.ErrorContains(t, err, "no backend to work on")
}
