package contract_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// wmcoData reads one of WMCO 11's own services ConfigMaps (testdata/wmco-11/services, its .data).
func wmcoData(t *testing.T, platform string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wmco-11", "services", "services-"+platform+".json"))
	require.NoError(t, err)
	var data map[string]string
	require.NoError(t, json.Unmarshal(b, &data))
	return data
}

// Every ConfigMap WMCO 11 generated parses, and renders back to exactly the strings WMCO stored.
func TestParseAndRenderRoundTripWMCOsConfigMaps(t *testing.T) {
	for _, p := range []string{"aws", "azure", "azure-with-cloud-config", "none", "nutanix"} {
		t.Run(p, func(t *testing.T) {
			data := wmcoData(t, p)
			d, err := contract.Parse("windows-services-11.0.0", data)
			require.NoError(t, err)
			out, err := contract.Render(d)
			require.NoError(t, err)
			assert.Equal(t, data, out)
		})
	}
}

func TestParseReadsWMCOsFields(t *testing.T) {
	d, err := contract.Parse("windows-services-11.0.0", wmcoData(t, "aws"))
	require.NoError(t, err)
	var names []string
	for _, s := range d.Services {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"containerd", "kubelet", "windows_exporter", "hybrid-overlay-node", "csi-proxy", "kube-proxy"}, names)
	kubelet, ok := d.Service("kubelet")
	require.True(t, ok)
	assert.True(t, kubelet.Bootstrap)
	assert.EqualValues(t, 1, kubelet.Priority)
	assert.Equal(t, []string{"containerd"}, kubelet.Dependencies)
	require.Len(t, kubelet.PowershellPreScripts, 2)
	assert.Equal(t, "HOSTNAME_OVERRIDE", kubelet.PowershellPreScripts[0].VariableName)
	kp, _ := d.Service("kube-proxy")
	require.Len(t, kp.PowershellPreScripts, 1)
	assert.Equal(t, contract.NodeVariable{Name: "NODE_SUBNET", NodeObjectJSONPath: `{.metadata.annotations.k8s\.ovn\.org/hybrid-overlay-node-subnet}`},
		kp.PowershellPreScripts[0].NodeArgs[1])
	assert.Equal(t, []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}, d.WatchedEnvironmentVars)
	assert.Empty(t, d.Files)
	assert.Equal(t, []string{"containerd", "kubelet"}, []string{d.Bootstrap()[0].Name, d.Bootstrap()[1].Name})
	assert.Equal(t, "windows-services-11.0.0", contract.ConfigMapName("11.0.0"))
}

// Each malformed ConfigMap is refused with an error naming the ConfigMap, the key and the field at fault.
func TestParseNamesTheBadField(t *testing.T) {
	svc := func(js string) map[string]string {
		return map[string]string{"services": js, "files": "[]"}
	}
	for _, tc := range []struct {
		name string
		data map[string]string
		want []string
	}{
		{"missing services", map[string]string{"files": "[]"}, []string{`key "services"`, "missing"}},
		{"missing files", map[string]string{"services": "[]"}, []string{`key "files"`, "missing"}},
		{"unknown key", map[string]string{"services": "[]", "files": "[]", "extra": "1"}, []string{`key "extra"`, "not a key"}},
		{"not JSON", svc(`[{"name":`), []string{`key "services"`, "not valid JSON"}},
		{"unknown field", svc(`[{"name":"a","path":"a.exe","bootstrap":false,"priority":0,"runAs":"x"}]`), []string{`key "services"`, `unknown field "runAs"`}},
		{"empty command", svc(`[{"name":"a","path":" ","priority":0}]`), []string{"service a: path: the command is empty"}},
		{"bad name", svc(`[{"name":"a\\b","path":"a.exe"}]`), []string{`name: "a\\b" is not a Windows service name`}},
		{"twice", svc(`[{"name":"a","path":"a.exe"},{"name":"A","path":"a.exe"}]`), []string{"service A: name: listed twice"}},
		{"bootstrap node variable", svc(`[{"name":"a","path":"a.exe N","bootstrap":true,"nodeVariablesInCommand":[{"name":"N","nodeObjectJsonPath":"{.metadata.name}"}]}]`),
			[]string{"service a: nodeVariablesInCommand: a bootstrap service starts before the Node exists"}},
		{"bootstrap depends on later", svc(`[{"name":"a","path":"a.exe","bootstrap":true,"priority":0,"dependencies":["b"]},{"name":"b","path":"b.exe","priority":1}]`),
			[]string{"service a: dependencies: a bootstrap service cannot depend on b"}},
		{"bootstrap after another", svc(`[{"name":"a","path":"a.exe","bootstrap":true,"priority":2},{"name":"b","path":"b.exe","priority":2}]`),
			[]string{"service a: priority 2: every bootstrap service must come before b (priority 2)"}},
		{"cycle", svc(`[{"name":"a","path":"a.exe","dependencies":["b"]},{"name":"b","path":"b.exe","dependencies":["c"]},{"name":"c","path":"c.exe","dependencies":["a"]}]`),
			[]string{"cycle: a → b → c → a"}},
		{"self dependency", svc(`[{"name":"a","path":"a.exe","dependencies":["a"]}]`), []string{`service a: dependencies[0]: "a" cannot be a dependency`}},
		{"bad JSON path", svc(`[{"name":"a","path":"a.exe N","nodeVariablesInCommand":[{"name":"N","nodeObjectJsonPath":"{.metadata.name"}]}]`),
			[]string{"service a: nodeVariablesInCommand[0]: nodeObjectJsonPath \"{.metadata.name\" is not a JSON path template"}},
		{"pre-script without path", svc(`[{"name":"a","path":"a.exe","powershellPreScripts":[{"path":"","NodeArgs":null}]}]`),
			[]string{"service a: powershellPreScripts[0]: path: the script is empty"}},
		{"bad checksum", map[string]string{"services": "[]", "files": `[{"path":"C:\\k\\a.exe","checksum":"xyz"}]`},
			[]string{`files[0] (C:\k\a.exe): checksum "xyz" is not a hexadecimal digest`}},
		{"bad env name", map[string]string{"services": "[]", "files": "[]", "environmentVars": `{"A=B":"x"}`},
			[]string{`environmentVars: "A=B" is not an environment variable name`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := contract.Parse("windows-services-9.9.9", tc.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "services ConfigMap windows-services-9.9.9")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// A dependency on a service the contract does not list is the host's business, not a cycle or an error.
func TestParseAllowsDependenciesOutsideTheContract(t *testing.T) {
	d, err := contract.Parse("cm", map[string]string{"services": `[{"name":"a","path":"a.exe","dependencies":["Tcpip"]}]`, "files": "[]"})
	require.NoError(t, err)
	assert.Equal(t, []string{"Tcpip"}, d.Services[0].Dependencies)
}

// Render keeps WMCO's form: services by priority, files never null, environmentVars only when set,
// NodeArgs null when empty.
func TestRenderWritesWMCOsForm(t *testing.T) {
	d := contract.Data{
		Services: []contract.Service{
			{Name: "b", Command: "b.exe", Priority: 2},
			{Name: "a", Command: "a.exe", Priority: 0, Bootstrap: true, PowershellPreScripts: []contract.PreScript{{Path: "x.ps1"}}},
		},
		WatchedEnvironmentVars: []string{"HTTP_PROXY"},
	}
	out, err := contract.Render(d)
	require.NoError(t, err)
	assert.Equal(t, `[{"name":"a","path":"a.exe","powershellPreScripts":[{"path":"x.ps1","NodeArgs":null}],"bootstrap":true,"priority":0},{"name":"b","path":"b.exe","bootstrap":false,"priority":2}]`, out["services"])
	assert.Equal(t, "[]", out["files"])
	assert.NotContains(t, out, "environmentVars")
	d.EnvironmentVars = map[string]string{"HTTP_PROXY": "http://proxy.example.test:3128"}
	out, err = contract.Render(d)
	require.NoError(t, err)
	assert.Equal(t, `{"HTTP_PROXY":"http://proxy.example.test:3128"}`, out["environmentVars"])
	assert.True(t, strings.HasPrefix(out["services"], `[{"name":"a"`), "input order is not changed in place")
	assert.Equal(t, "b", d.Services[0].Name)
}
