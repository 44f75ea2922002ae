package nodeconfig

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testFacts() Facts {
	return Facts{
		Platform: "AWS", APIServerURL: "https://api-int.demo.example.com:6443", ServiceNetwork: "172.30.0.0/16",
		BootstrapToken: "s3cr3t-bootstrap-token", BootstrapCA: []byte("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"),
		KubeletCA:            []byte("-----BEGIN CERTIFICATE-----\nKUBELET-CA\n-----END CERTIFICATE-----\n"),
		HybridClusterNetwork: "10.132.0.0/14", VXLANPort: "9898",
		Proxy: Proxy{HTTP: "http://proxy:3128", HTTPS: "http://proxy:3128", NoProxy: ".cluster.local"},
	}
}

func testHost() Host { return Host{NodeName: "ip-10-0-1-5.ec2.internal", IP: "127.0.1.5"} }

func testPayload(platform string) []PayloadFile {
	var out []PayloadFile
	for _, name := range RequiredPayload(platform) {
		out = append(out, PayloadFile{Name: name, Local: "/payload/" + name, SHA256: strings.Repeat("ab", 32), Size: 1000})
	}
	return out
}

func TestClusterDNS(t *testing.T) {
	for _, tc := range []struct{ cidr, want, err string }{
		{"172.30.0.0/16", "172.30.0.10", ""},
		{"127.96.0.0/12", "127.96.0.10", ""},
		{" 127.168.3.0/24 ", "127.168.3.10", ""},
		{"2001:db8::/112", "2001:db8::a", ""},
		{"127.0.0.0/29", "", "too small"},
		{"nonsense", "", "invalid CIDR"},
	} {
		got, err := ClusterDNS(tc.cidr)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.cidr)
			continue
		}
		require.NoError(t, err, tc.cidr)
		assert.Equal(t, tc.want, got, tc.cidr)
	}
}

func TestFactsValidateNamesEachProblem(t *testing.T) {
	err := Facts{APIServerURL: "http://x", ServiceNetwork: "x", VXLANPort: "70000"}.Validate()
	require.Error(t, err)
	for _, want := range []string{"not an https URL", "cluster DNS", "bootstrap token", "trust the API server", "kubelet client CA", "VXLAN port"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NoError(t, testFacts().Validate())
	assert.ErrorContains(t, Host{NodeName: "Upper", IP: "127.0.0.1"}.Validate(), "lower-case")
	assert.ErrorContains(t, Host{NodeName: "n", IP: "::1"}.Validate(), "IPv4")
}

func TestDesiredRefusesIncompletePayload(t *testing.T) {
	p := testPayload("AWS")
	_, err := Desired(testFacts(), testHost(), p[1:])
	assert.ErrorContains(t, err, "kube-node/kubelet.exe")
	// Azure needs azure-cloud-node-manager, which an AWS payload set lacks.
	f := testFacts()
	f.Platform = "Azure"
	_, err = Desired(f, testHost(), testPayload("None"))
	assert.ErrorContains(t, err, "azure-cloud-node-manager.exe")
}

func TestDesiredServicesPerPlatform(t *testing.T) {
	names := func(platform string) []string {
		f := testFacts()
		f.Platform = platform
		var out []string
		for _, s := range Services(f, testHost()) {
			out = append(out, s.Name)
		}
		return out
	}
	assert.Equal(t, []string{"containerd", "kubelet", "windows_exporter", "csi-proxy", "hybrid-overlay-node", "kube-proxy"}, names("None"))
	assert.Equal(t, []string{"containerd", "kubelet", "windows_exporter", "csi-proxy", "hybrid-overlay-node", "kube-proxy", "cloud-node-manager"}, names("Azure"))

	f := testFacts()
	byName := map[string]Service{}
	for _, s := range Services(f, testHost()) {
		byName[s.Name] = s
	}
	kubelet := byName["kubelet"].BinPath
	for _, want := range []string{
		`C:\k\kube-log-runner.exe -log-file=C:\var\log\kubelet\kubelet.log C:\k\kubelet.exe --config=C:\k\kubelet.conf`,
		`--bootstrap-kubeconfig=C:\k\bootstrap-kubeconfig`, `--kubeconfig=C:\k\kubeconfig`, `--cert-dir=c:\var\lib\kubelet\pki\`,
		"--node-labels=node.openshift.io/os_id=Windows", "--node-ip=127.0.1.5", "--hostname-override=ip-10-0-1-5.ec2.internal",
		"--cloud-provider=external", `--image-credential-provider-config=C:\k\credential-provider-config.yaml`,
	} {
		assert.Contains(t, kubelet, want)
	}
	assert.Equal(t, []string{"containerd"}, byName["kubelet"].DependsOn)
	assert.Contains(t, byName["hybrid-overlay-node"].BinPath, "--hybrid-overlay-vxlan-port 9898")
	assert.Contains(t, byName["hybrid-overlay-node"].BinPath, "--k8s-apiserver https://api-int.demo.example.com:6443 --k8s-cacert C:\\k\\bootstrap-ca.crt")
	assert.Equal(t, []string{"hybrid-overlay-node"}, byName["kube-proxy"].DependsOn)
	f.Platform = "None"
	for _, s := range Services(f, testHost()) {
		assert.NotContains(t, s.BinPath, "--cloud-provider", "platform None has no cloud provider")
		assert.NotContains(t, s.BinPath, "credential-provider")
	}
}

func TestRenderedConfigParses(t *testing.T) {
	f := testFacts()
	b, err := KubeletConfig(f)
	require.NoError(t, err)
	var kc kubeletv1beta1.KubeletConfiguration
	require.NoError(t, json.Unmarshal(b, &kc))
	assert.Equal(t, []string{"172.30.0.10"}, kc.ClusterDNS)
	assert.Equal(t, "cluster.local", kc.ClusterDomain)
	assert.False(t, *kc.CgroupsPerQOS)
	assert.Equal(t, []string{"none"}, kc.EnforceNodeAllocatable)
	assert.Equal(t, `C:\k\kubelet-ca.crt`, kc.Authentication.X509.ClientCAFile)
	assert.True(t, kc.ServerTLSBootstrap)
	assert.True(t, kc.RotateCertificates)
	assert.Equal(t, "os", kc.RegisterWithTaints[0].Key)
	assert.EqualValues(t, "NoSchedule", kc.RegisterWithTaints[0].Effect)
	assert.Equal(t, "", *kc.ResolverConfig)
	assert.EqualValues(t, 250, kc.MaxPods)

	kb, err := BootstrapKubeconfig(f)
	require.NoError(t, err)
	cfg, err := clientcmd.Load(kb)
	require.NoError(t, err)
	ctx := cfg.Contexts[cfg.CurrentContext]
	assert.Equal(t, f.APIServerURL, cfg.Clusters[ctx.Cluster].Server)
	assert.Equal(t, f.BootstrapCA, cfg.Clusters[ctx.Cluster].CertificateAuthorityData)
	assert.Equal(t, f.BootstrapToken, cfg.AuthInfos[ctx.AuthInfo].Token)

	assert.Contains(t, string(ContainerdConfig()), `config_path = "C:/k/containerd/registries"`)
	assert.Contains(t, string(ContainerdConfig()), `sandbox_image = "mcr.microsoft.com/oss/kubernetes/pause:3.9"`)
}

// configured is what a host reports once it matches st.
func configured(st State) Observed {
	o := Observed{Dirs: map[string]bool{}, Hashes: map[string]string{}, Services: map[string]ObservedService{}, Env: st.Env}
	for _, d := range st.Dirs {
		o.Dirs[strings.ToLower(d)] = true
	}
	for _, f := range st.Files {
		o.Hashes[strings.ToLower(f.Path)] = strings.ToUpper(f.SHA256)
	}
	for _, s := range st.Services {
		o.Services[s.Name] = ObservedService{State: "Running", BinPath: s.BinPath, DependsOn: s.DependsOn}
	}
	return o
}

func TestDiff(t *testing.T) {
	st, err := Desired(testFacts(), testHost(), testPayload("AWS"))
	require.NoError(t, err)

	fresh := Diff(st, Observed{})
	assert.Len(t, fresh.MakeDirs, len(st.Dirs))
	assert.Len(t, fresh.Payload, len(RequiredPayload("AWS")))
	var cfg []string
	for _, f := range fresh.Config {
		cfg = append(cfg, f.Path)
	}
	assert.Equal(t, []string{`C:\k\bootstrap-ca.crt`, `C:\k\bootstrap-kubeconfig`, `C:\k\containerd\containerd_conf.toml`,
		`C:\k\credential-provider-config.yaml`, `C:\k\kubelet-ca.crt`, `C:\k\kubelet.conf`}, cfg, "no CA bundle without a proxy CA")
	assert.Len(t, fresh.Create, 6)
	assert.Equal(t, []string{"containerd", "kubelet", "windows_exporter", "csi-proxy", "hybrid-overlay-node", "kube-proxy"}, fresh.Start)
	assert.Len(t, fresh.Env, 3)
	assert.False(t, fresh.Empty())

	done := Diff(st, configured(st))
	assert.True(t, done.Empty(), "%+v", done)
	assert.Equal(t, Counts{Dirs: len(st.Dirs), Files: len(st.Files), Services: 6}, done.UpToDate)

	// One changed file, a stopped service, a changed kubelet command line and a stale registry file.
	o := configured(st)
	o.Hashes[strings.ToLower(`C:\k\kube-proxy.exe`)] = "00"
	o.Services["csi-proxy"] = ObservedService{State: "Stopped", BinPath: o.Services["csi-proxy"].BinPath}
	k := o.Services["kubelet"]
	k.BinPath += " --v=4"
	o.Services["kubelet"] = k
	o.RegistryFiles = []string{`C:\k\containerd\registries\quay.io`}
	p := Diff(st, o)
	require.Len(t, p.Payload, 1)
	assert.Equal(t, `C:\k\kube-proxy.exe`, p.Payload[0].Path)
	assert.Empty(t, p.Config)
	assert.Equal(t, []string{"kubelet", "csi-proxy"}, p.Recreate, "a stopped service is recreated: a cut run may have left it without recovery actions")
	assert.Equal(t, []string{"kube-proxy", "hybrid-overlay-node", "kubelet"}, p.Stop, "dependents stop first")
	assert.Equal(t, []string{"kubelet", "csi-proxy", "hybrid-overlay-node", "kube-proxy"}, p.Start)
	assert.Equal(t, []string{`C:\k\containerd\registries\quay.io`}, p.RemoveRegistry)
}

// Windows refuses to replace a running program's file: a service whose executable the payload replaces
// stops first (with its dependents) and starts again; services that do not run it are left alone.
func TestDiffStopsServicesWhoseExecutablesChange(t *testing.T) {
	st, err := Desired(testFacts(), testHost(), testPayload("AWS"))
	require.NoError(t, err)
	o := configured(st)
	o.Hashes[strings.ToLower(`C:\k\windows_exporter.exe`)] = "00"
	p := Diff(st, o)
	assert.Equal(t, []string{"windows_exporter"}, p.Stop)
	assert.Equal(t, []string{"windows_exporter"}, p.Start)
	assert.Empty(t, p.Recreate)

	o = configured(st)
	o.Hashes[strings.ToLower(`C:\k\kube-log-runner.exe`)] = "00" // kubelet and kube-proxy run under it
	p = Diff(st, o)
	assert.Equal(t, []string{"kube-proxy", "hybrid-overlay-node", "kubelet"}, p.Stop, "kubelet's dependents stop first")

	o = configured(st)
	o.Hashes[strings.ToLower(`C:\k\cni\win-overlay.exe`)] = "00" // run by containerd per pod, not a service
	assert.Empty(t, Diff(st, o).Stop)

	assert.Equal(t, []string{`C:\k\kube-log-runner.exe`, `C:\k\kubelet.exe`}, Images(kubeletCommand(testFacts(), testHost())))
	assert.Equal(t, []string{`C:\k\csi-proxy.exe`}, Images(binPath("csi-proxy", testFacts(), testHost())))
}

func TestDryRunGolden(t *testing.T) {
	f := testFacts()
	f.TrustedCABundle = []byte("-----BEGIN CERTIFICATE-----\nPROXY-CA\n-----END CERTIFICATE-----\n")
	f.Registries = map[string][]byte{`quay.io\hosts.toml`: []byte("server = \"https://quay.io/v2\"\n")}
	st, err := Desired(f, testHost(), testPayload("AWS"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		obs  Observed
	}{{"fresh", Observed{}}, {"configured", configured(st)}} {
		var buf bytes.Buffer
		require.NoError(t, Diff(st, tc.obs).Write(&buf))
		assert.NotContains(t, buf.String(), f.BootstrapToken, "the token is never printed")
		golden := filepath.Join("testdata", "dry-run-"+tc.name+".txt")
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		assert.Equal(t, string(want), buf.String())
	}
}

func TestHumanBytes(t *testing.T) {
	assert.Equal(t, "512 B", HumanBytes(512))
	assert.Equal(t, "1.5 KiB", HumanBytes(1536))
	assert.Equal(t, "45.0 MiB", HumanBytes(45*1024*1024))
}
