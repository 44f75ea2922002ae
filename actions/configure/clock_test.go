package configure_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// TestConfigureRefusesAHostWhoseClockIsOff: against the real API server (its Date header is the clock), a
// host whose clock runs ahead or behind beyond what a kubelet's certificates allow is refused before
// anything is written, with what to do; a host on the right time in another time zone is not.
func TestConfigureRefusesAHostWhoseClockIsOff(t *testing.T) {
	e := actiontest.NewEnv(t)
	hs := e.Hosts()
	nf, err := e.Ops.ReadNodeFacts(e.Ctx, cluster.NodeFactsOptions{Version: "11.0.1"})
	require.NoError(t, err)
	pacific := time.FixedZone("PST", -8*3600)
	cases := []struct {
		node, ip string
		clock    func() time.Time
		refused  string // "" when the clock is fine
	}{
		{"win-clock-ahead", "127.0.0.91", func() time.Time { return time.Now().Add(5 * time.Minute) }, "ahead of the API server's"},
		{"win-clock-behind", "127.0.0.92", func() time.Time { return time.Now().Add(-7 * time.Minute) }, "behind the API server's"},
		{"win-clock-pacific", "127.0.0.93", func() time.Time { return time.Now().In(pacific) }, ""},
	}
	for _, c := range cases {
		t.Run(c.node, func(t *testing.T) {
			sim, err := windows.Start(windows.Options{Addr: c.ip + ":0", Hostname: c.node, AuthorizedKeys: []ssh.PublicKey{hs.Signer.PublicKey()},
				LogInterval: time.Hour, ServicePending: 20 * time.Millisecond, Clock: c.clock})
			require.NoError(t, err)
			t.Cleanup(func() { sim.Close() })
			h, err := hs.Pool.Host(remote.Target{Node: c.node, Addr: sim.Addr()})
			require.NoError(t, err)
			req := configure.ConfigureRequest{Facts: nf.Facts, BootstrapIdentity: nf.BootstrapIdentity,
				Host: nodeconfig.Host{NodeName: c.node, IP: c.ip, BYOH: true}, HostNames: []string{c.node}, Payload: testPayload(t),
				DryRun: true}
			rec := &actiontest.Recorder{}
			_, err = configure.Configure(e.Ctx, e.Ops, h, req, rec)
			assert.True(t, sim.HasCommand("Get-Date -Format o"), "the host's clock was read")
			assert.NotContains(t, rec.Dump(), "clock check skipped")
			if c.refused == "" {
				require.NoError(t, err, rec.Dump())
				return
			}
			var skew *cluster.ClockSkewError
			require.True(t, errors.As(err, &skew), "%v\n%s", err, rec.Dump())
			assert.Contains(t, err.Error(), c.refused)
			assert.Contains(t, err.Error(), "w32tm /resync")
			for _, cmd := range sim.Commands() {
				assert.NotRegexp(t, writeCommand, cmd, "nothing is written on a refused host")
			}
		})
	}
}

// TestCheckClockSkewLimits: ahead is limited by wmcon's CSR rule, behind by the signer's backdating; the
// measurement's own uncertainty never turns a good host into a refused one.
func TestCheckClockSkewLimits(t *testing.T) {
	server := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		skew, uncertainty time.Duration
		refused           bool
	}{
		{0, 0, false},
		{cluster.MaxHostAhead, 0, false},
		{cluster.MaxHostAhead + time.Second, 0, true},
		{cluster.MaxHostAhead + time.Second, 2 * time.Second, false},
		{-cluster.MaxHostAhead - time.Minute, 0, false}, // behind by 3m: the signer backdates 5m
		{-cluster.MaxHostBehind, 0, false},
		{-cluster.MaxHostBehind - time.Second, 0, true},
	} {
		err := cluster.CheckClockSkew("h", server.Add(c.skew), server, c.uncertainty)
		assert.Equal(t, c.refused, err != nil, "skew %s ± %s: %v", c.skew, c.uncertainty, err)
	}
}
