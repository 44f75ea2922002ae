package nodeconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig/conformance"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/registries"
)

// conformanceAPIServer is the API server URL WMCO's generators were given (testdata/wmco-11/README.md).
const conformanceAPIServer = "https://api-int.example.test:6443"

// conformanceInput is one line of testdata/wmco-11/inputs.txt: the inputs WMCO's generator got for one file.
type conformanceInput struct {
	name        string // services-<name>.json
	platform    string
	vxlanPort   string
	kubeletArgs map[string]string
}

var inputLine = regexp.MustCompile(`^services-(\S+)\.json: platform="([^"]*)" vxlanPort="([^"]*)" argsFromIgnition=(\{.*\})$`)

func conformanceInputs(t *testing.T) []conformanceInput {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformance.Dir(), "inputs.txt"))
	require.NoError(t, err)
	var out []conformanceInput
	for _, line := range regexp.MustCompile(`\r?\n`).Split(string(b), -1) {
		if line == "" {
			continue
		}
		m := inputLine.FindStringSubmatch(line)
		require.NotNil(t, m, "inputs.txt line %q", line)
		in := conformanceInput{name: m[1], platform: m[2], vxlanPort: m[3]}
		require.NoError(t, json.Unmarshal([]byte(m[4]), &in.kubeletArgs), line)
		out = append(out, in)
	}
	require.NotEmpty(t, out)
	return out
}

// judge fails the test on every difference the allowlist does not list, and on every entry for the compared
// artifacts that no longer matches a difference.
func judge(t *testing.T, compared []string, found []conformance.Difference) {
	t.Helper()
	entries, err := conformance.Allowlist()
	require.NoError(t, err)
	unlisted, stale := conformance.Judge(entries, compared, found)
	for _, d := range unlisted {
		t.Errorf("wmcon differs from WMCO 11 (fix wmcon, or list it with its reason in testdata/wmco-11/allowlist.yaml):\n%s", d)
	}
	for _, e := range stale {
		t.Errorf("testdata/wmco-11/allowlist.yaml lists a difference that no longer exists; delete it: %s %s", e.Artifact, e.Field)
	}
}

// wmcon's generator, fed the inputs WMCO 11's generator got, gives WMCO's services ConfigMap field by field,
// save the allowlisted differences; every file in testdata/wmco-11/services is compared.
func TestContractConformsToWMCO11(t *testing.T) {
	var compared []string
	var found []conformance.Difference
	for _, in := range conformanceInputs(t) {
		artifact := "services/" + in.name
		compared = append(compared, artifact)
		data, err := conformance.ReadServices(in.name)
		require.NoError(t, err)
		wmco, err := contract.Parse("windows-services-11.0.0", data)
		require.NoError(t, err)
		ours, err := Contract(ContractInputs{Platform: in.platform, APIServerURL: conformanceAPIServer, VXLANPort: in.vxlanPort, KubeletArgs: in.kubeletArgs})
		require.NoError(t, err, artifact)
		found = append(found, conformance.CompareContracts(artifact, wmco, ours)...)
	}
	all, err := conformance.Artifacts()
	require.NoError(t, err)
	for _, a := range all {
		if ok, _ := filepath.Match("services/*", a); ok {
			assert.Contains(t, compared, a, "inputs.txt has no line for %s", a)
		}
	}
	judge(t, compared, found)
}

// kubelet.conf is WMCO's field by field, for WMCO's service network.
func TestKubeletConfigConformsToWMCO11(t *testing.T) {
	wmco, err := os.ReadFile(filepath.Join(conformance.Dir(), "kubelet.conf"))
	require.NoError(t, err)
	ours, err := KubeletConfig(Facts{ServiceNetwork: "172.30.0.0/16"})
	require.NoError(t, err)
	found, err := conformance.CompareJSON("kubelet.conf", wmco, ours)
	require.NoError(t, err)
	judge(t, []string{"kubelet.conf"}, found)
}

// The standalone defaults (no kubelet arguments from the cluster) are what the cluster gives on each
// platform WMCO's conformance data covers, so render-services prints WMCO's ConfigMap.
func TestStandaloneContractIsWMCOsForTheDefaultInputs(t *testing.T) {
	for _, in := range conformanceInputs(t) {
		if in.name == "azure-with-cloud-config" {
			continue // an in-tree cloud provider: a cluster that says so, not wmcon's default
		}
		ours, err := Contract(ContractInputs{Platform: in.platform, APIServerURL: conformanceAPIServer})
		require.NoError(t, err)
		withArgs, err := Contract(ContractInputs{Platform: in.platform, APIServerURL: conformanceAPIServer, KubeletArgs: in.kubeletArgs})
		require.NoError(t, err)
		assert.Equal(t, withArgs, ours, in.name)
	}
}

// The engine runs the contract's command lines, resolved for the host, except for the services listed in
// awaitingHostStep, whose commands really differ (an entry whose step wmcon now performs must go).
func TestEngineRunsTheContractSaveThePendingHostSteps(t *testing.T) {
	for _, platform := range Platforms {
		f := testFacts()
		f.Platform = platform
		data, err := Contract(f.ContractInputs())
		require.NoError(t, err)
		services, err := Services(f, testHost())
		require.NoError(t, err)
		require.Len(t, services, len(data.Services))
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testHost().NodeName}}
		for i, s := range services {
			cs := data.Services[i]
			require.Equal(t, cs.Name, s.Name)
			assert.Equal(t, int(cs.Priority), s.StartOrder, s.Name)
			assert.Equal(t, cs.Dependencies, s.DependsOn, s.Name)
			resolved, err := contract.Resolve(cs, node, map[string]string{NodeIPVar: testHost().IP, HostnameOverrideVar: testHost().NodeName})
			require.NoError(t, err)
			if step, pending := PendingHostSteps()[s.Name]; pending {
				assert.NotEqual(t, resolved, s.BinPath, "%s/%s: listed as pending, yet the engine runs the contract's command", platform, s.Name)
				assert.Equal(t, step, s.Pending)
			} else {
				assert.Equal(t, resolved, s.BinPath, "%s/%s", platform, s.Name)
				assert.Empty(t, s.Pending)
			}
		}
	}
}

// config.Services (log locations, the order restart and deconfigure use) names the contract's services in
// its order, with its dependencies; plus WMCO's own node daemon, which the contract does not list.
func TestConfigServicesAgreeWithTheContract(t *testing.T) {
	for _, platform := range Platforms {
		data, err := Contract(ContractInputs{Platform: platform, APIServerURL: conformanceAPIServer})
		require.NoError(t, err)
		byName := map[string]contract.Service{}
		for _, s := range data.Services {
			byName[s.Name] = s
		}
		listed := 0
		for _, ws := range config.Services {
			if ws.Name == "windows-instance-config-daemon" || (ws.Platform != "" && ws.Platform != platform) {
				continue
			}
			cs, ok := byName[ws.Name]
			if !assert.True(t, ok, "%s: config.Services has %s, the contract does not", platform, ws.Name) {
				continue
			}
			listed++
			assert.Equal(t, int(cs.Priority), ws.StartOrder, "%s/%s", platform, ws.Name)
			assert.ElementsMatch(t, cs.Dependencies, ws.DependsOn, "%s/%s", platform, ws.Name)
		}
		assert.Equal(t, len(data.Services), listed, "%s: every service of the contract is in config.Services", platform)
	}
}

// containerd_conf.toml is the file WMCO's payload ships, field by field and byte for byte.
func TestContainerdConfigConformsToWMCO11(t *testing.T) {
	wmco, err := os.ReadFile(filepath.Join(conformance.Dir(), "containerd_conf.toml"))
	require.NoError(t, err)
	ours := ContainerdConfig()
	found, err := conformance.CompareJSON("containerd_conf.toml", tomlToJSON(t, wmco), tomlToJSON(t, ours))
	require.NoError(t, err)
	judge(t, []string{"containerd_conf.toml"}, found)
	assert.Equal(t, string(wmco), string(ours), "WMCO's file byte for byte")
}

// containerd reads the registry hosts from the directory the mirrors feature writes, and runs the pause
// image the mirror rules keep reachable.
func TestContainerdConfigReadsTheMirrorsDirectory(t *testing.T) {
	var conf struct {
		Plugins map[string]struct {
			SandboxImage string `toml:"sandbox_image"`
			Registry     struct {
				ConfigPath string `toml:"config_path"`
			} `toml:"registry"`
		} `toml:"plugins"`
	}
	require.NoError(t, toml.Unmarshal(ContainerdConfig(), &conf))
	cri := conf.Plugins["io.containerd.grpc.v1.cri"]
	assert.Equal(t, registries.Dir, cri.Registry.ConfigPath)
	assert.Equal(t, RegistriesDir, cri.Registry.ConfigPath)
	assert.Equal(t, registries.PauseImage, cri.SandboxImage)
}

func tomlToJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var v map[string]any
	require.NoError(t, toml.Unmarshal(b, &v))
	j, err := json.Marshal(v)
	require.NoError(t, err)
	return j
}
