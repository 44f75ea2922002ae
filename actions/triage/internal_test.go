package triage

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

func TestKubeWindow(t *testing.T) {
	for _, tc := range []struct {
		operator string
		lo, hi   int
		ok       bool
	}{
		{"11.0.1", 36, 37, true},
		{"11.0.0-0f6ea4b", 36, 37, true},
		{"10.17.0", 30, 30, true},
		{"12.3.0", 0, 0, false},
		{"", 0, 0, false},
		{"latest", 0, 0, false},
	} {
		lo, hi, ok := config.KubernetesWindow(tc.operator)
		assert.Equal(t, tc.ok, ok, tc.operator)
		assert.Equal(t, [2]int{tc.lo, tc.hi}, [2]int{lo, hi}, tc.operator)
	}
}

func TestSortChecksBySeverityThenLikelihood(t *testing.T) {
	cs := []diagnosis.Check{
		{ID: "info", Status: diagnosis.CheckOK, Rank: rankWindowsBuild},
		{ID: "drift", Status: diagnosis.CheckWarn, Rank: rankWMCOVersion},
		{ID: "services-unknown", Status: diagnosis.CheckUnknown, Rank: rankServices},
		{ID: "not-ready", Status: diagnosis.CheckFail, Rank: rankNodeReady},
		{ID: "reboot", Status: diagnosis.CheckWarn, Rank: rankRebootRequired},
		{ID: "kubelet", Status: diagnosis.CheckFail, Rank: rankServices},
		{ID: "ssh", Status: diagnosis.CheckOK, Rank: rankHostSSH},
	}
	diagnosis.Sort(cs)
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	assert.Equal(t, []string{"kubelet", "not-ready", "reboot", "drift", "services-unknown", "ssh", "info"}, ids)
}

func TestKlogErrorLines(t *testing.T) {
	assert.True(t, klogError.MatchString(`E0301 12:00:01.000002    4242 kubelet.go:2000] "boom"`))
	assert.False(t, klogError.MatchString(`I0301 12:00:01.000002    4242 kubelet.go:2000] "fine"`))
	assert.False(t, klogError.MatchString(`Error: something that is not klog`))
	assert.False(t, klogError.MatchString(`W0301 12:00:01.000002    4242 x.go:1] "E0301 12:00:01 inside"`))
}

func TestAnnotationFingerprint(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	key, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	assert.Equal(t, ssh.FingerprintSHA256(key), annotationFingerprint(base64.StdEncoding.EncodeToString(key.Marshal())))
	assert.Equal(t, "", annotationFingerprint(""))
	assert.Equal(t, "(unreadable annotation)", annotationFingerprint("not base64!"))
}

func TestWindowsBuildAndVXLANOnVSphere(t *testing.T) {
	in := triageInput{snap: &model.Snapshot{Cluster: model.ClusterInfo{Platform: "VSphere"}},
		node:  model.NodeInfo{WindowsBuild: "10.0.26100", OSImage: "Windows Server 2025 Datacenter"},
		extra: clusterFacts{configured: true, network: NetworkConfig{OperatorFound: true, HybridOverlay: true, HybridClusterNetworks: []string{"10.132.0.0/14"}}}}
	assert.Equal(t, "Windows Server 2025", in.windowsBuild().Detail)
	h := in.hybridOverlay()
	assert.Equal(t, diagnosis.CheckWarn, h.Status, "vSphere needs a custom VXLAN port")

	in.extra.network.VXLANPort = 9898
	assert.Equal(t, diagnosis.CheckOK, in.hybridOverlay().Status)

	in.node.WindowsBuild = "10.0.19041"
	assert.Equal(t, diagnosis.CheckWarn, in.windowsBuild().Status, "a client build is not a supported server release")
	in.extra.network.HybridClusterNetworks = nil
	assert.Equal(t, diagnosis.CheckFail, in.hybridOverlay().Status, "no hybrid cluster network: Windows pods get no network")
}

// triageFake is a host with only what triage reads: a fake of the narrow interface, not of remote.Host.
type triageFake struct {
	states    map[string]remote.ServiceState
	statesErr error
	log       []string
	route     bool
	routeAsks int
}

func (f *triageFake) ServiceStates(_ context.Context, names ...string) (map[string]remote.ServiceState, error) {
	return f.states, f.statesErr
}
func (f *triageFake) ServiceConfigs(context.Context, ...string) (map[string]remote.ServiceConfig, error) {
	return nil, errors.New("standalone: triage reads no service configuration")
}
func (f *triageFake) FileHashes(context.Context, []string) (map[string]string, error) {
	return nil, errors.New("standalone: triage reads no file hashes")
}
func (f *triageFake) Tail(context.Context, string, remote.TailOptions, func(remote.TailEvent)) error {
	return errors.New("triage does not follow logs")
}
func (f *triageFake) TailOnce(_ context.Context, path string, n int) ([]string, error) {
	if path != `C:\var\log\kubelet\kubelet.log` {
		return nil, fmt.Errorf("unexpected log %s", path)
	}
	return f.log[max(len(f.log)-n, 0):], nil
}
func (f *triageFake) HasMetadataRoute(context.Context) (bool, error) {
	f.routeAsks++
	return f.route, nil
}

func TestReadHostFacts(t *testing.T) {
	ctx := context.Background()
	h := &triageFake{states: map[string]remote.ServiceState{"kubelet": remote.ServiceRunning}, log: []string{"a", "b", "c"}}
	f := readHostFacts(ctx, h, 2, "AWS", contractFacts{}, hostFacts{configured: true})
	assert.Equal(t, remote.ServiceRunning, f.states["kubelet"])
	assert.Equal(t, []string{"b", "c"}, f.kubeletLog, "the last lines asked for")
	assert.True(t, f.routeKnown)
	assert.False(t, f.routeExists)
	assert.NoError(t, f.reachErr)

	h.routeAsks = 0
	f = readHostFacts(ctx, h, 2, "None", contractFacts{}, hostFacts{configured: true})
	assert.False(t, f.routeKnown, "the metadata route is AWS's")
	assert.Zero(t, h.routeAsks)

	// A host that could not be asked at all makes every host check unknown, and nothing more is read.
	h = &triageFake{statesErr: remote.ErrConnectionLost, log: []string{"a"}}
	f = readHostFacts(ctx, h, 2, "AWS", contractFacts{}, hostFacts{configured: true})
	assert.ErrorIs(t, f.reachErr, remote.ErrConnectionLost)
	assert.NoError(t, f.statesErr)
	assert.Nil(t, f.kubeletLog)
	assert.Zero(t, h.routeAsks)

	// A host that ran the query and failed it still answers: the log is read.
	h = &triageFake{statesErr: &remote.CommandError{Host: "h", Command: "Get-Service", Exit: 1}, log: []string{"a"}}
	f = readHostFacts(ctx, h, 2, "None", contractFacts{}, hostFacts{configured: true})
	assert.NoError(t, f.reachErr)
	assert.Error(t, f.statesErr)
	assert.Equal(t, []string{"a"}, f.kubeletLog)
}

// TestTriageOfTheAWSWindowsNodeFixture: the Node WMCO leaves on AWS (testdata/cluster), one operator release
// behind, is triaged as drift the operator has not picked up yet, with the operator's log to read; its
// scheduling is as WMCO wants it (the os=Windows taint is not a problem).
func TestTriageOfTheAWSWindowsNodeFixture(t *testing.T) {
	b, err := os.ReadFile("../../testdata/cluster/aws-windows-node.yaml")
	require.NoError(t, err)
	var n corev1.Node
	require.NoError(t, yaml.Unmarshal(b, &n))
	snap := &model.Snapshot{Cluster: model.ClusterInfo{Platform: "AWS", WMCOVersion: "10.20.1"}}
	in := triageInput{node: cluster.NodeInfoFrom(&n, snap.Cluster.WMCOVersion), snap: snap,
		now: time.Date(2026, 11, 23, 8, 2, 0, 0, time.UTC)}

	v := in.wmcoVersion()
	assert.Equal(t, diagnosis.CheckWarn, v.Status, v.Detail)
	assert.Contains(t, v.Detail, "configured by WMCO 10.19.0-8c2f1a3, the operator is 10.20.1")
	assert.Contains(t, v.Detail, "has not picked the node up yet")
	assert.Contains(t, v.Fix, "oc logs -n openshift-windows-machine-config-operator")

	s := in.scheduling()
	assert.Equal(t, diagnosis.CheckOK, s.Status, s.Detail)
	r := in.nodeReady()
	assert.Equal(t, diagnosis.CheckOK, r.Status, r.Detail)
}
