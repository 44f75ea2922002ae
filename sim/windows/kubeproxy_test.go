package windows

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

const kubeProxyLog = `C:\var\log\kube-proxy\kube-proxy.log`

// replaceKubeProxy recreates the kube-proxy service with another command line and starts it.
func replaceKubeProxy(t *testing.T, th *testHost, c *ssh.Client, binPath string) {
	t.Helper()
	if th.ServiceRunning("kube-proxy") {
		stopAndWait(t, th, c, "kube-proxy")
	}
	require.Contains(t, run(t, c, `sc.exe delete kube-proxy`).stdout, "SUCCESS")
	require.Contains(t, run(t, c, `sc.exe create kube-proxy binPath='`+binPath+`' start=auto depend='hybrid-overlay-node'`).stdout, "SUCCESS")
	require.Contains(t, run(t, c, `sc.exe failure kube-proxy reset= 600 actions= restart/10/restart/30/restart/60/restart/120`).stdout, "SUCCESS")
	run(t, c, `sc.exe start kube-proxy`)
}

func kubeProxyExited(t *testing.T, th *testHost, why string) {
	t.Helper()
	eventually(t, "kube-proxy exited: "+why, func() bool {
		data, _ := th.ReadFile(kubeProxyLog)
		info, _ := th.Service("kube-proxy")
		return info.Crashes > 0 && strings.Contains(string(data), `"Error running ProxyServer" err="`+why+`"`)
	})
}

// A node WMCO configured runs kube-proxy from the configuration its network step wrote, with the VIP
// endpoint's address as source VIP. A kube-proxy set up without that step — the flags wmcon used before it,
// or a configuration without a source VIP — exits with the real kube-proxy's reason on the hybrid overlay
// network, which is an overlay.
func TestKubeProxyNeedsASourceVIPOnTheOverlayNetwork(t *testing.T) {
	th := startHost(t, Options{Configured: true, Addr: "127.0.0.61:0"})
	c := th.dial(t)
	eventually(t, "kube-proxy runs", func() bool {
		data, _ := th.ReadFile(kubeProxyLog)
		return th.ServiceRunning("kube-proxy") && strings.Contains(string(data), `"Using Kernelspace Proxier" networkName="OVNKubernetesHybridOverlayNetwork" sourceVip="127.61.64.2" enableDSR=true`)
	})
	info, _ := th.Service("kube-proxy")
	wmco := info.BinaryPath
	assert.Equal(t, `C:\k\kube-log-runner.exe -log-file=C:\var\log\kube-proxy\kube-proxy.log C:\k\kube-proxy.exe --config C:\k\kube-proxy.conf --windows-service`, wmco)

	replaceKubeProxy(t, th, c, `C:\k\kube-log-runner.exe -log-file=C:\var\log\kube-proxy\kube-proxy.log C:\k\kube-proxy.exe --windows-service `+
		`--proxy-mode=kernelspace --feature-gates=WinOverlay=true --hostname-override=n --kubeconfig=C:\k\kubeconfig `+
		`--network-name=OVNKubernetesHybridOverlayNetwork --enable-dsr=false --v=2 --cluster-cidr=10.132.0.0/14`)
	kubeProxyExited(t, th, "source-vip flag not set")

	conf, err := th.ReadFile(`C:\k\kube-proxy.conf`)
	require.NoError(t, err)
	require.NoError(t, th.WriteFile(`C:\k\kube-proxy.conf`, []byte(strings.Replace(string(conf), "sourceVip: 127.61.64.2", `sourceVip: ""`, 1))))
	require.NoError(t, th.RemoveFile(kubeProxyLog))
	replaceKubeProxy(t, th, c, wmco)
	kubeProxyExited(t, th, "source-vip flag not set")

	require.NoError(t, th.WriteFile(`C:\k\kube-proxy.conf`, []byte(strings.Replace(string(conf), "WinDSR: true", "WinDSR: false", 1))))
	require.NoError(t, th.RemoveFile(kubeProxyLog))
	replaceKubeProxy(t, th, c, wmco)
	kubeProxyExited(t, th, "WinDSR feature gate not enabled")

	require.NoError(t, th.WriteFile(`C:\k\kube-proxy.conf`, conf))
	eventually(t, "its recovery actions start it again, now that the file is right", func() bool { return th.ServiceRunning("kube-proxy") })
}

// Until hybrid-overlay-node has created its HNS network, kube-proxy waits for it with an error each second,
// as the real one does, instead of exiting.
func TestKubeProxyWaitsForItsHNSNetwork(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	c := th.dial(t)
	stopAndWait(t, th, c, "kube-proxy")
	th.mu.Lock()
	delete(th.hns, hybridOverlayNetwork)
	th.mu.Unlock()
	run(t, c, `sc.exe start kube-proxy`)
	eventually(t, "waiting for the network", func() bool {
		data, _ := th.ReadFile(kubeProxyLog)
		return strings.Contains(string(data), `"Unable to find HNS Network specified, please check network name and CNI deployment"`)
	})
	assert.True(t, th.ServiceRunning("kube-proxy"), "it waits, it does not exit")
}
