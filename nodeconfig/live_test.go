package nodeconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/nodeconfig/contract"
)

func serviceNamed(t *testing.T, ss []Service, name string) Service {
	t.Helper()
	for _, s := range ss {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no service %s", name)
	return Service{}
}

// The pre-scripts' outputs from the host, when given, fill the command lines instead of wmcon's stand-ins:
// the kubelet registers under the name the metadata gave, not the name wmcon predicted.
func TestServicesTakeThePreScriptOutputsFromTheHost(t *testing.T) {
	h := testHost()
	h.PreScriptOutputs = map[string]map[string]string{
		"kubelet": {HostnameOverrideVar: "ip-127-0-0-9.ec2.internal", NodeIPVar: "127.0.0.9"}, "containerd": {}}
	ss, err := Services(testFacts(), h)
	require.NoError(t, err)
	kubelet := serviceNamed(t, ss, "kubelet")
	assert.Contains(t, kubelet.BinPath, "--hostname-override=ip-127-0-0-9.ec2.internal --node-ip=127.0.0.9")

	h.PreScriptOutputs = map[string]map[string]string{"containerd": {}}
	_, err = Services(testFacts(), h)
	assert.ErrorContains(t, err, "the pre-script has not run on the host", "run outputs without the kubelet's: an error, not a stand-in")
	h.PreScriptOutputs = nil
	_, err = Services(testFacts(), h)
	assert.ErrorContains(t, err, "the pre-script has not run on the host", "no outputs at all: an error, wmcon guesses no name or address")
}

// With WMCO installed its ConfigMap is the contract: a host gets WMCO's command lines even where they differ
// from the ones wmcon would generate.
func TestServicesFollowWMCOsContractWhenGiven(t *testing.T) {
	f := testFacts()
	data, err := Contract(f.ContractInputs())
	require.NoError(t, err)
	for i := range data.Services {
		if data.Services[i].Name == "csi-proxy" {
			data.Services[i].Command = strings.Replace(data.Services[i].Command, "--v=2", "--v=4", 1)
		}
	}
	f.Contract = &data
	ss, err := Services(f, testHost())
	require.NoError(t, err)
	assert.Contains(t, serviceNamed(t, ss, "csi-proxy").BinPath, "--v=4")

	st, err := Desired(f, testHost(), testPayload("AWS"))
	require.NoError(t, err)
	assert.Contains(t, serviceNamed(t, st.Services, "csi-proxy").BinPath, "--v=4", "the desired state follows it too")

	f.Contract = &contract.Data{Services: data.Services[:1]}
	ss, err = Services(f, testHost())
	require.NoError(t, err)
	assert.Len(t, ss, 1, "exactly the contract's services")
}

// windows_exporter always runs the contract's command (TLS): the configuration writes its certificate where
// WMCO does (the key as a secret, the web configuration beside it); facts without one are refused rather than
// left serving plain HTTP.
func TestExporterTLSAsWMCO(t *testing.T) {
	f := testFacts()
	f.ExporterTLSCert, f.ExporterTLSKey = nil, nil
	_, err := Desired(f, testHost(), testPayload("AWS"))
	require.ErrorContains(t, err, "windows_exporter serves TLS")

	f = testFacts()
	st, err := Desired(f, testHost(), testPayload("AWS"))
	require.NoError(t, err)
	exp := serviceNamed(t, st.Services, "windows_exporter")
	assert.Contains(t, exp.BinPath, "--web.config.file "+ExporterWebConfigPath)
	assert.Empty(t, exp.Pending)
	files := map[string]File{}
	for _, fl := range st.Files {
		files[fl.Path] = fl
	}
	assert.Equal(t, f.ExporterTLSCert, files[ExporterCertPath].Data)
	assert.Equal(t, f.ExporterTLSKey, files[ExporterKeyPath].Data)
	assert.True(t, files[ExporterKeyPath].Secret, "the key is never printed")
	assert.Equal(t, ExporterWebConfig(), files[ExporterWebConfigPath].Data)
}

// A service with pre-scripts starts a new batch: what comes before it runs first (hybrid-overlay-node before
// kube-proxy's network step); containerd's Defender script runs before the first batch.
func TestStartBatchesSplitAtPreScripts(t *testing.T) {
	ss, err := Services(testFacts(), testHost())
	require.NoError(t, err)
	var before, after []Service
	for _, s := range ss {
		if s.AfterJoin {
			after = append(after, s)
		} else {
			before = append(before, s)
		}
	}
	names := func(bs [][]Service) [][]string {
		var out [][]string
		for _, b := range bs {
			out = append(out, nil)
			for _, s := range b {
				out[len(out)-1] = append(out[len(out)-1], s.Name)
			}
		}
		return out
	}
	assert.Equal(t, [][]string{{"containerd", "kubelet"}}, names(StartBatches(before)), "only the bootstrap services start before the Node exists, as WMCO starts them")
	assert.Equal(t, [][]string{{"windows_exporter", "hybrid-overlay-node", "csi-proxy"}, {"kube-proxy"}}, names(StartBatches(after)))
	assert.Empty(t, StartBatches(nil))
}
