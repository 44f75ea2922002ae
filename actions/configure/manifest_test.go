package configure_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// The contract's files are the payload's manifest: a payload file WMCO's ConfigMap lists with another
// checksum stops the configuration before anything is written, naming the file and both checksums; a payload
// that matches its manifest is configured.
func TestConfigureHoldsThePayloadToTheContractsFileManifest(t *testing.T) {
	e := actiontest.NewEnv(t)
	hs := e.Hosts()
	const node, ip = "win-configure-manifest", "127.0.0.73"
	sim := hs.BareHost(node, ip)
	nf, err := e.Ops.ReadNodeFacts(e.Ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	h, err := hs.Pool.Host(remote.Target{Node: node, Addr: sim.Addr()})
	require.NoError(t, err)
	payload := testPayload(t)
	sums := map[string]string{}
	for _, p := range payload {
		sums[p.Name] = p.SHA256
	}
	data, err := nf.Facts.ServicesContract()
	require.NoError(t, err)
	wrong := strings.Repeat("ab", 32)
	data.Files = []contract.File{
		{Path: `C:\k\kubelet.exe`, Checksum: strings.ToUpper(sums["kube-node/kubelet.exe"])},
		{Path: `C:\k\kube-proxy.exe`, Checksum: wrong},
		{Path: `C:\k\windows-instance-config-daemon.exe`, Checksum: wrong}, // WMCO's own daemon: wmcon copies none
	}
	facts := nf.Facts
	facts.Contract, facts.ContractSource = &data, "ConfigMap openshift-windows-machine-config-operator/windows-services-11.0.1"
	req := configure.ConfigureRequest{Facts: facts, BootstrapIdentity: nf.BootstrapIdentity, Host: nodeconfig.Host{NodeName: node, IP: ip}, Payload: payload}

	_, err = configure.Configure(e.Ctx, e.Ops, h, req, &actiontest.Recorder{})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, `payload file C:\k\kube-proxy.exe (`)
	assert.Contains(t, msg, "has sha256 "+sums["kube-node/kube-proxy.exe"]+", but ConfigMap openshift-windows-machine-config-operator/windows-services-11.0.1 lists")
	assert.Contains(t, msg, "with sha256 "+wrong)
	assert.Contains(t, msg, "--payload-image")
	assert.NotContains(t, msg, `C:\k\kubelet.exe`, "it matches (checksums compare without regard to case)")
	assert.NotContains(t, msg, "windows-instance-config-daemon", "a file wmcon does not copy is no payload mismatch")
	for _, c := range sim.Commands() {
		assert.False(t, writeCommand.MatchString(c), "written before the manifest was checked: %s", c)
	}
	assert.False(t, sim.Exists(`C:\k`))

	data.Files[1].Checksum = sums["kube-node/kube-proxy.exe"]
	req.DryRun = true
	res, err := configure.Configure(e.Ctx, e.Ops, h, req, &actiontest.Recorder{})
	require.NoError(t, err, "the payload matches its manifest")
	assert.NotEmpty(t, res.Plan.Payload)
}
