package doctor_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/doctor"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// An API server that does not answer (a loopback port nothing listens on): the reachability check fails
// saying what to look at, every other check says it was not made — none claims a finding it could not read.
func TestDoctorWhenTheAPIServerDoesNotAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	c, err := cluster.NewClients(&rest.Config{Host: "https://" + addr, Timeout: 5 * time.Second})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := doctor.Doctor(ctx, doctor.DoctorDeps{Clients: c}, nil)
	require.NoError(t, err)
	assert.False(t, rep.Healthy())
	reach := actiontest.Check(t, rep, "cluster-reachable")
	assert.Equal(t, diagnosis.CheckFail, reach.Status)
	assert.Contains(t, reach.Detail, "the API server did not answer")
	assert.Contains(t, reach.Fix, "kubeconfig")
	for _, ch := range rep.Checks {
		if ch.ID == "cluster-reachable" {
			continue
		}
		assert.Equal(t, diagnosis.CheckUnknown, ch.Status, "%s: %s", ch.ID, ch.Detail)
	}
}
