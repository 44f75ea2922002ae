package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/ovn"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
	"github.com/wmcon/wmcon/testsupport/ociregistry"
)

// bareHosts are simulated Windows Servers with only OpenSSH, whose kubelet.exe is the honest kubelet: once
// its service starts it joins through the real API server with exactly the files wmcon wrote on C:\k.
type bareHosts struct {
	t                           *testing.T
	dir, keyFile, sshConfig     string
	signer                      ssh.Signer
	payloadDir                  string
	kubeconfig, knownHosts, cfg string
	// kube, once overlay gave it, runs each host's hybrid-overlay-node as OVN-Kubernetes' (sim/ovn).
	kube kubernetes.Interface
}

// overlay plays OVN-Kubernetes' hybrid overlay on the cluster of kube until the test ends: Windows nodes get
// their subnets, and the hosts started from now on create their HNS networks with them. WMCO's network step
// (kube-proxy's pre-script) waits for both.
func (b *bareHosts) overlay(kube kubernetes.Interface) {
	b.kube = kube
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { (&ovn.SubnetAllocator{Kube: kube}).Run(ctx, 200*time.Millisecond); close(done) }()
	b.t.Cleanup(func() { stop(); <-done })
}

func newBareHosts(t *testing.T) *bareHosts {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "configure-test")
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	dir := t.TempDir()
	b := &bareHosts{t: t, dir: dir, signer: signer, keyFile: filepath.Join(dir, "id_ed25519"),
		sshConfig: filepath.Join(dir, "ssh_config"), payloadDir: filepath.Join(dir, "payload"), knownHosts: filepath.Join(dir, "known_hosts")}
	require.NoError(t, os.WriteFile(b.keyFile, pem.EncodeToMemory(block), 0o600))
	require.NoError(t, os.WriteFile(b.sshConfig, nil, 0o600))
	require.NoError(t, payload.WriteSynthetic(b.payloadDir, nodeconfig.RequiredPayload("AWS")))
	return b
}

// start boots a bare host named name on ip and maps ip to its SSH port in the ssh_config file.
func (b *bareHosts) start(name, ip string) *windows.Host {
	b.t.Helper()
	return b.startOpts(name, ip, windows.Options{Programs: map[string]windows.Program{"kubelet.exe": kubelet.Kubelet(kubelet.KubeletOptions{})}})
}

// startOpts is start with more options (the programs behind the host's executables).
func (b *bareHosts) startOpts(name, ip string, opts windows.Options) *windows.Host {
	b.t.Helper()
	opts.Addr, opts.Hostname = net.JoinHostPort(ip, "0"), strings.ToUpper(name)
	opts.AuthorizedKeys, opts.LogInterval = []ssh.PublicKey{b.signer.PublicKey()}, time.Hour
	if opts.ServicePending == 0 {
		opts.ServicePending = 20 * time.Millisecond
	}
	if _, ok := opts.Programs["hybrid-overlay-node.exe"]; !ok && b.kube != nil {
		if opts.Programs == nil {
			opts.Programs = map[string]windows.Program{}
		}
		opts.Programs["hybrid-overlay-node.exe"] = ovn.HybridOverlayNode(ovn.NodeOptions{})
	}
	h, err := windows.Start(opts)
	require.NoError(b.t, err)
	b.t.Cleanup(func() { h.Close() })
	_, port, _ := net.SplitHostPort(h.Addr())
	f, err := os.OpenFile(b.sshConfig, os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(b.t, err)
	_, err = fmt.Fprintf(f, "Host %s\n  Port %s\n", ip, port)
	require.NoError(b.t, err)
	require.NoError(b.t, f.Close())
	return h
}

func (b *bareHosts) args(kubeconfig string, a ...string) []string {
	return append([]string{"--kubeconfig", kubeconfig, "--known-hosts", b.knownHosts, "--ssh-config", b.sshConfig,
		"--ssh-key", b.keyFile, "--ssh-agent=false"}, a...)
}

// hostWrite matches the commands that change a host.
var hostWrite = regexp.MustCompile(`(?i)New-Item|Move-Item|Remove-Item|SetEnvironmentVariable|Remove-HnsNetwork|sc\.exe (create|start|stop|delete|failure|description|config)`)

// TestConfigureHeadlessEndToEnd runs wmcon configure and deconfigure from the command line against the real
// kube-apiserver and kube-controller-manager (CSR signer and node lifecycle, no approver) with simulated bare
// hosts whose kubelet joins with what wmcon wrote: a bare host becomes a Ready, labelled, tainted and
// annotated node; a re-run makes zero writes (counted in the API server's audit log and on the host); a
// wrong bootstrap token fails with the kubelet's reason; deconfigure returns the host to bare.
func TestConfigureHeadlessEndToEnd(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	auditLog := filepath.Join(dir, "audit.log")
	require.NoError(t, os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"), 0o600))
	server := kubeapi.Start(t, kubeapi.WithControllerManager(),
		kubeapi.WithAPIServerFlags("--audit-policy-file="+policy, "--audit-log-path="+auditLog))
	t.Setenv(actions.AuditEnv, filepath.Join(dir, "wmcon-audit.log"))
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())
	b := newBareHosts(t)
	b.overlay(kube)
	const node, ip = "win-cfg-a", "127.0.0.81"
	host := b.start(node, ip)
	admin := server.Kubeconfig("wmcon-configure", "system:masters")

	// A dry run lists the plan and changes nothing.
	code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir, "--dry-run")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "create kubelet (start order 1, depends on containerd")
	assert.NotContains(t, out, server.BootstrapToken(), "the token is never printed")
	assert.False(t, host.Exists(`C:\k`))

	code, out, errOut = runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir, "-o", "json",
		"--csr-timeout", "60s", "--ready-timeout", "60s")...)
	require.Equal(t, 0, code, "%s\n%s\nkubelet log:\n%s", out, errOut, kubeletLog(host))
	events := jsonEvents(t, out)
	last := events[len(events)-1]
	assert.Equal(t, event.Succeeded, last.Outcome)
	assert.Equal(t, node, last.Target)

	n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, nodeReady(n), "the node is Ready")
	assert.Equal(t, "", n.Labels[config.WorkerRoleLabel])
	assert.Equal(t, "true", n.Labels[config.BYOHLabel])
	assert.Equal(t, "windows", n.Labels[config.OSLabel])
	assert.Equal(t, "Windows", n.Labels[config.OSIDNodeLabel])
	assert.Contains(t, n.Spec.Taints, corev1.Taint{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule})
	assert.False(t, n.Spec.Unschedulable)
	assert.Equal(t, payloadVersion(t, b.payloadDir), n.Annotations[config.VersionAnnotation], "no operator: the payload's version")
	assert.Equal(t, keyHash(t, b.keyFile), n.Annotations[config.PubKeyHashAnnotation])
	assert.NotEmpty(t, n.Annotations[config.HostKeyAnnotation], "the host key pinned on first use is carried by the Node")
	assert.Equal(t, ip, internalIP(n))
	for _, s := range config.Services {
		if s.Name == "cloud-node-manager" || s.Name == "windows-instance-config-daemon" {
			continue
		}
		assert.True(t, host.ServiceRunning(s.Name), "service %s runs", s.Name)
	}
	assert.Equal(t, nodeconfig.HNSNetworks, host.HNSNetworks(), "hybrid-overlay-node runs and made its networks")
	records, err := actions.ReadAudit(filepath.Join(dir, "wmcon-audit.log"))
	require.NoError(t, err)
	require.Len(t, records, 1, "the configuration is audited (the dry run is not)")
	assert.Equal(t, "configure", records[0].Action)
	assert.Equal(t, "wmcon-configure", records[0].User)

	// A re-run on the configured host changes nothing, on the host or in the cluster: counted.
	rerun := server.Kubeconfig("wmcon-rerun", "system:masters")
	before := len(host.Commands())
	code, out, errOut = runWmcon(t, b.args(rerun, "configure", "--address", ip, "--payload", b.payloadDir)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "already configured: nothing changed")
	hostCmds := host.Commands()[before:]
	require.NotEmpty(t, hostCmds)
	for _, c := range hostCmds {
		assert.False(t, hostWrite.MatchString(c), "re-run wrote to the host: %s", c)
	}
	assert.Empty(t, auditedWritesBy(t, server, auditLog, "wmcon-rerun"), "re-run wrote to the cluster")

	// A wrong bootstrap token: the kubelet cannot post its CSR, and the user reads its reason.
	t.Run("wrong bootstrap token", func(t *testing.T) {
		const node2, ip2 = "win-cfg-badtoken", "127.0.0.82"
		host2 := b.start(node2, ip2)
		sec, err := kube.CoreV1().Secrets(cluster.MCONamespace).Get(ctx, cluster.NodeBootstrapperSecret, metav1.GetOptions{})
		require.NoError(t, err)
		good := sec.DeepCopy()
		sec.Data[corev1.ServiceAccountTokenKey] = []byte("not-the-token")
		sec.ResourceVersion = ""
		_, err = kube.CoreV1().Secrets(cluster.MCONamespace).Update(ctx, sec, metav1.UpdateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			cur, err := kube.CoreV1().Secrets(cluster.MCONamespace).Get(context.Background(), cluster.NodeBootstrapperSecret, metav1.GetOptions{})
			if err == nil {
				cur.Data = good.Data
				_, _ = kube.CoreV1().Secrets(cluster.MCONamespace).Update(context.Background(), cur, metav1.UpdateOptions{})
			}
		})
		// The timeouts are long: the run must stop on the kubelet's log line, not on a timeout.
		start := time.Now()
		code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", ip2, "--payload", b.payloadDir,
			"--csr-timeout", "10m", "--ready-timeout", "10m")...)
		t.Logf("failed after %s:\n%s\n%s", time.Since(start), out, errOut)
		assert.Equal(t, ExitHalfDone, code, "the host is half-configured: %s", out)
		assert.Contains(t, out+errOut, "the kubelet exited and restarting it cannot help; the kubelet says", "stopped by the kubelet's own reason")
		assert.Contains(t, out+errOut, "Unauthorized")
		assert.NotContains(t, out+errOut, "did not reach Running within", "not by the services' timeout")
		assert.NotContains(t, out+errOut, "CSR from this host's kubelet within", "not by the CSR timeout")
		_, err = kube.CoreV1().Nodes().Get(ctx, node2, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "no node joined")
		assert.True(t, host2.Exists(nodeconfig.BootstrapKubeconfigPath), "left for the re-run to fix: %s", errOut)
		// No hint names the Node, which does not exist: the log is named on the host, the resume is by address.
		assert.Contains(t, out, "on the host "+ip2+` (C:\var\log`)
		assert.Contains(t, out, "no node "+node2+" has registered yet for wmcon logs to read")
		assert.Contains(t, out, "run wmcon configure --address "+ip2+" --payload ")
		assert.NotContains(t, out+errOut, "wmcon logs "+node2)
		assert.NotContains(t, out+errOut, "wmcon configure "+node2)
	})

	// Without --payload, the payload comes from the installed operator's image (its CSV's Deployment),
	// pulled from an OCI registry (in-process, on loopback) and cached by digest.
	t.Run("payload from the operator's image", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		const node3, ip3 = "win-cfg-image", "127.0.0.83"
		host3 := b.start(node3, ip3)
		ref := ociregistry.PushImage(t, ociregistry.StartRegistry(t), b.payloadDir)
		operatorCSV(t, server, ref)

		code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", ip3, "--csr-timeout", "60s", "--ready-timeout", "60s")...)
		require.Equal(t, 0, code, "%s\n%s\nkubelet log:\n%s", out, errOut, kubeletLog(host3))
		assert.Regexp(t, `payload \S+/openshift/windows-machine-config-operator@sha256:[0-9a-f]{64}: \d+ files`, out)
		n, err := kube.CoreV1().Nodes().Get(ctx, node3, metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, nodeReady(n))
		want, err := os.ReadFile(filepath.Join(b.payloadDir, "kube-node", "kubelet.exe"))
		require.NoError(t, err)
		got, err := host3.ReadFile(`C:\k\kubelet.exe`)
		require.NoError(t, err)
		assert.Equal(t, want, got, "the image's kubelet.exe was installed")
	})

	// deconfigure returns the host to bare and deletes the Node; it is idempotent.
	code, out, errOut = runWmcon(t, b.args(admin, "deconfigure", node)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	_, err = kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the Node is deleted")
	for _, s := range config.Services {
		_, ok := host.Service(s.Name)
		assert.False(t, ok, "service %s is deleted", s.Name)
	}
	for _, p := range []string{`C:\k`, `C:\var\lib\kubelet`, `C:\var\log\kubelet`, `C:\var\lib\cni`} {
		assert.False(t, host.Exists(p), "%s is removed", p)
	}
	assert.Empty(t, host.HNSNetworks(), "the hybrid overlay's HNS networks are removed")
	assert.True(t, host.Up(), "the host stays reachable")
	code, out, errOut = runWmcon(t, b.args(admin, "deconfigure", node)...)
	assert.NotEqual(t, 0, code, "the Node is gone: nothing to name")
	assert.Contains(t, errOut, "not found")
	records, err = actions.ReadAudit(filepath.Join(dir, "wmcon-audit.log"))
	require.NoError(t, err)
	assert.Equal(t, "deconfigure", records[len(records)-1].Action)
	// Every configure and deconfigure was one audited run (the dry run none): an intent, then its outcome.
	outcomes, _ := auditedOnce(t, filepath.Join(dir, "wmcon-audit.log"), 0)
	assert.Equal(t, []string{"configure " + node, "configure " + node, "configure win-cfg-badtoken", "configure win-cfg-image",
		"deconfigure " + node, "deconfigure " + node}, outcomes)
}

// payloadVersion is the version a standalone node configured with the payload in dir carries.
func payloadVersion(t *testing.T, dir string) string {
	p, err := payload.LoadDir(dir, t.TempDir())
	require.NoError(t, err)
	return configure.StandaloneVersion(p)
}

// operatorCSV installs a WMCO ClusterServiceVersion whose Deployment runs image, as OLM leaves it; the test
// removes it when it ends.
func operatorCSV(t *testing.T, server *kubeapi.Server, image string) {
	t.Helper()
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	csv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": config.OperatorName + ".v11.0.1", "namespace": config.OperatorNamespace},
		"spec": map[string]any{"displayName": "Windows Machine Config Operator", "version": "11.0.1",
			"installModes": []any{map[string]any{"type": "OwnNamespace", "supported": true}},
			"install": map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": []any{map[string]any{
				"name": config.OperatorName,
				"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"name": config.OperatorName}},
					"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"name": config.OperatorName}},
						"spec": map[string]any{"containers": []any{map[string]any{"name": "manager", "image": image}}}}},
			}}}},
		}}}
	dyn := dynamic.NewForConfigOrDie(server.AdminConfig()).Resource(cluster.CSVResource).Namespace(config.OperatorNamespace)
	_, err = dyn.Create(ctx, csv, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dyn.Delete(context.Background(), csv.GetName(), metav1.DeleteOptions{}) })
}

func kubeletLog(h *windows.Host) string {
	b, _ := h.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	return string(b)
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

func keyHash(t *testing.T, keyFile string) string {
	b, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	s, err := sshkey.Parse(b, nil)
	require.NoError(t, err)
	return sshkey.PubKeyHash(s.PublicKey())
}
