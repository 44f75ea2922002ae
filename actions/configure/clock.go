package configure

import (
	"context"
	"errors"
	"time"

	"github.com/wmcon/wmcon/cluster"
)

// checkClock refuses, before anything is changed, a host whose clock is too far from the API server's: its
// kubelet could not join (cluster.CheckClockSkew says why), and configure would otherwise find out only
// at the CSR step, minutes later, with the host half configured. A clock that cannot be read is not a
// reason to stop: the run says so and goes on.
func (run *configureRun) checkClock(ctx context.Context) error {
	t0 := time.Now()
	server, rtt, err := run.c.ServerTime(ctx)
	if err != nil {
		run.r.Log(StepInspect, "clock check skipped: "+err.Error())
		return nil
	}
	t1 := time.Now()
	host, err := run.h.HostTime(ctx)
	if err != nil {
		run.r.Log(StepInspect, "clock check skipped: "+err.Error())
		return nil
	}
	t2 := time.Now()
	// The server's clock was read about t0+rtt/2 and the host's about halfway through t1..t2: carry the
	// server's reading forward by the time between, on this machine's monotonic clock.
	hostRead := t1.Add(t2.Sub(t1) / 2)
	run.hostAhead, run.hostClockErr = host.Sub(hostRead), t2.Sub(t1)/2
	serverAtHostRead := server.Add(hostRead.Sub(t0.Add(rtt / 2)))
	uncertainty := rtt/2 + t2.Sub(t1)/2 + time.Second
	err = cluster.CheckClockSkew(run.req.Host.NodeName, host, serverAtHostRead, uncertainty)
	var skew *cluster.ClockSkewError
	if errors.As(err, &skew) {
		return run.fail(StepInspect, err, "set the host's time, then run the same command again (nothing was changed)")
	}
	return err
}
