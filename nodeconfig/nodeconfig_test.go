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
		// windows_exporter's certificate, which the cluster's facts always carry (cluster.ReadNodeFacts).
		ExporterTLSCert: []byte("-----BEGIN CERTIFICATE-----\nEXPORTER\n-----END CERTIFICATE-----\n"),
		ExporterTLSKey:  []byte("-----BEGIN EC PRIVATE KEY-----\nK\n-----END EC PRIVATE KEY-----\n"),
	}
}

// testHost is a host whose pre-scripts ran: the kubelet's outputs as an AWS host gives them.
func testHost() Host {
	return Host{NodeName: "ip-127-0-0-5.ec2.internal", IP: "127.0.0.5",
		PreScriptOutputs: map[string]map[string]string{"kubelet": {NodeIPVar: "127.0.0.5", HostnameOverrideVar: "ip-127-0-0-5.ec2.internal"}}}
}

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

func testServices(t *testing.T, f Facts) map[string]Service {
	t.Helper()
	ss, err := Services(f, testHost())
	require.NoError(t, err)
	out := map[string]Service{}
	for _, s := range ss {
		out[s.Name] = s
	}
	return out
}

func TestDesiredServicesPerPlatform(t *testing.T) {
	names := func(platform string) []string {
		f := testFacts()
		f.Platform = platform
		ss, err := Services(f, testHost())
		require.NoError(t, err)
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	assert.Equal(t, []string{"containerd", "kubelet", "windows_exporter", "hybrid-overlay-node", "csi-proxy", "kube-proxy"}, names("None"))
	assert.Equal(t, []string{"containerd", "kubelet", "windows_exporter", "hybrid-overlay-node", "csi-proxy", "kube-proxy", "cloud-node-manager"}, names("Azure"))

	f := testFacts()
	byName := testServices(t, f)
	kubelet := byName["kubelet"].BinPath
	for _, want := range []string{
		`C:\k\kube-log-runner.exe -log-file=C:\var\log\kubelet\kubelet.log C:\k\kubelet.exe --config=C:\k\kubelet.conf`,
		`--bootstrap-kubeconfig=C:\k\bootstrap-kubeconfig`, `--kubeconfig=C:\k\kubeconfig`, `--cert-dir=c:\var\lib\kubelet\pki\`,
		"--node-labels=node.openshift.io/os_id=Windows", "--windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS",
		"--node-ip=127.0.0.5", "--hostname-override=ip-127-0-0-5.ec2.internal",
		"--cloud-provider=external", `--image-credential-provider-config=C:\k\credential-provider-config.yaml`,
	} {
		assert.Contains(t, kubelet, want)
	}
	assert.Empty(t, byName["kubelet"].Pending, "the kubelet's command is the contract's, its pre-script outputs supplied by wmcon")
	assert.Equal(t, []string{"containerd"}, byName["kubelet"].DependsOn)
	ho := byName["hybrid-overlay-node"].BinPath
	assert.Contains(t, ho, "--node ip-127-0-0-5.ec2.internal --bootstrap-kubeconfig=C:\\k\\kubeconfig --cert-dir=C:\\k\\cni\\config --cert-duration=24h",
		"hybrid-overlay-node requests its own certificate")
	assert.Contains(t, ho, "--k8s-apiserver=https://api-int.demo.example.com:6443 --k8s-cacert C:\\k\\bootstrap-ca.crt --hybrid-overlay-vxlan-port 9898")
	assert.Equal(t, []string{"hybrid-overlay-node"}, byName["kube-proxy"].DependsOn)
	assert.Empty(t, byName["kube-proxy"].Pending, "wmcon performs kube-proxy's network step")
	assert.Contains(t, byName["kube-proxy"].BinPath, `C:\k\kube-proxy.exe --config C:\k\kube-proxy.conf --windows-service`)
	assert.Equal(t, []string{`C:\Temp\network-conf.ps1 -hostnameOverride NODE_NAME -clusterCIDR NODE_SUBNET -kubeConfigPath KUBE_CONFIG_PATH -kubeProxyConfigPath KUBE_PROXY_CONFIG_PATH -verbosity VERBOSITY`},
		byName["kube-proxy"].PreScripts)
	assert.Contains(t, byName["windows_exporter"].BinPath, `--log.file C:\var\log\windows_exporter\windows_exporter.log`)
	assert.Contains(t, byName["windows_exporter"].BinPath, "--web.config.file "+ExporterWebConfigPath, "WMCO's command: TLS")

	for _, p := range []string{"None", "Azure", "Nutanix", "BareMetal", ""} {
		f.Platform = p
		for _, s := range testServices(t, f) {
			assert.NotContains(t, s.BinPath, "credential-provider", p)
		}
		assert.NotContains(t, testServices(t, f)["kubelet"].BinPath, "--hostname-override", "%s: the kubelet keeps the host's name", p)
	}
	f.Platform = "None"
	assert.Contains(t, testServices(t, f)["kubelet"].BinPath, "--cloud-provider= ", "platform None has no cloud provider")
	f.Platform = "Azure"
	assert.Contains(t, testServices(t, f)["cloud-node-manager"].BinPath, "--node-name=ip-127-0-0-5.ec2.internal --wait-routes=false --kubeconfig=C:\\k\\wicd-kubeconfig",
		"cloud-node-manager runs with WMCO's service-account identity, not the node's")
	assert.Empty(t, testServices(t, f)["cloud-node-manager"].Pending)
}

// On Azure the configuration writes C:\k\wicd-kubeconfig (a secret) with the service account's token, which
// cloud-node-manager runs with; without the credentials it refuses to plan rather than fall back to the node's
// own, which may not initialize its Node. Elsewhere no service needs it and it is not written.
func TestWICDKubeconfigOnAzure(t *testing.T) {
	f := testFacts()
	f.Platform = "Azure"
	_, err := Desired(f, testHost(), testPayload("Azure"))
	require.ErrorContains(t, err, "no service-account credentials")

	f.WICDToken, f.WICDCA = "sa-token", []byte("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n")
	st, err := Desired(f, testHost(), testPayload("Azure"))
	require.NoError(t, err)
	var kc *File
	for i := range st.Files {
		if st.Files[i].Path == WICDKubeconfigPath {
			kc = &st.Files[i]
		}
	}
	require.NotNil(t, kc, "wicd-kubeconfig is written")
	assert.True(t, kc.Secret, "it holds a token: never printed")
	cfg, err := clientcmd.Load(kc.Data)
	require.NoError(t, err)
	cur := cfg.Contexts[cfg.CurrentContext]
	require.NotNil(t, cur)
	assert.Equal(t, "sa-token", cfg.AuthInfos[cur.AuthInfo].Token)
	assert.Equal(t, f.APIServerURL, cfg.Clusters[cur.Cluster].Server)
	assert.Equal(t, f.WICDCA, cfg.Clusters[cur.Cluster].CertificateAuthorityData)

	f.Platform = "AWS"
	st, err = Desired(f, testHost(), testPayload("AWS"))
	require.NoError(t, err)
	for _, fl := range st.Files {
		assert.NotEqual(t, WICDKubeconfigPath, fl.Path, "no service runs with it on AWS")
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
		`C:\k\credential-provider-config.yaml`, `C:\k\kubelet-ca.crt`, `C:\k\kubelet.conf`,
		`C:\k\tls\certs\tls.crt`, `C:\k\tls\certs\tls.key`, `C:\k\tls\windows-exporter-webconfig.yaml`}, cfg, "no CA bundle without a proxy CA")
	assert.Len(t, fresh.Create, 6)
	assert.Equal(t, []string{"containerd", "kubelet", "windows_exporter", "hybrid-overlay-node", "csi-proxy", "kube-proxy"}, fresh.Start)
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
	assert.Equal(t, []string{"kubelet", "hybrid-overlay-node", "csi-proxy", "kube-proxy"}, p.Start)
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

	byName := testServices(t, testFacts())
	assert.Equal(t, []string{`C:\k\kube-log-runner.exe`, `C:\k\kubelet.exe`}, Images(byName["kubelet"].BinPath))
	assert.Equal(t, []string{`C:\k\csi-proxy.exe`}, Images(byName["csi-proxy"].BinPath))
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
