package windows

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wmcon/wmcon/config"
)

func TestServiceLifecycle(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	require.NoError(t, th.WriteFile(`C:\k\svc.exe`, []byte("MZ")))
	require.NoError(t, th.WriteFile(`C:\k\base.exe`, []byte("MZ")))

	r := run(t, c, `sc.exe qc demo`)
	assert.Equal(t, 1, r.code, "powershell -c turns a native exit code into 1")
	assert.Equal(t, "[SC] OpenService FAILED 1060:\r\n\r\nThe specified service does not exist as an installed service.\r\n\r\n", r.stdout)

	assert.Equal(t, result{stdout: "[SC] CreateService SUCCESS\r\n"}, run(t, c, `sc.exe create base binPath='C:\k\base.exe' start=auto`))
	r = run(t, c, `sc.exe create demo binPath='C:\k\svc.exe --flag=a b' start=auto depend='base'`)
	assert.Equal(t, result{stdout: "[SC] CreateService SUCCESS\r\n"}, r)
	r = run(t, c, `sc.exe create demo binPath='C:\k\svc.exe' start=auto`)
	assert.Contains(t, r.stdout, "FAILED 1073")

	assert.Equal(t, "[SC] ChangeServiceConfig2 SUCCESS\r\n", run(t, c, `sc.exe description demo 'A demo service'`).stdout)
	assert.Equal(t, "[SC] ChangeServiceConfig2 SUCCESS\r\n", run(t, c, `sc.exe failure demo reset= 600 actions= restart/10/restart/30/restart/60/restart/120`).stdout)

	qc := run(t, c, `sc.exe qc demo`).stdout
	assert.Contains(t, qc, "BINARY_PATH_NAME   : C:\\k\\svc.exe --flag=a b\r\n")
	assert.Contains(t, qc, "DEPENDENCIES       : base\r\n")
	assert.Contains(t, qc, "START_TYPE         : 2   AUTO_START\r\n")
	info, ok := th.Service("demo")
	require.True(t, ok)
	assert.Equal(t, "A demo service", info.Description)
	assert.Equal(t, 600*time.Second, info.ResetPeriod)
	assert.Equal(t, []RecoveryAction{{"restart", 10 * time.Millisecond}, {"restart", 30 * time.Millisecond}, {"restart", 60 * time.Millisecond}, {"restart", 120 * time.Millisecond}}, info.Recovery)

	assert.Contains(t, run(t, c, `sc.exe query demo`).stdout, "STATE              : 1  STOPPED")
	r = run(t, c, `sc.exe start demo`)
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "STATE              : 2  START_PENDING")
	assert.True(t, th.ServiceRunning("base"), "the dependency was started first")
	eventually(t, "demo running", func() bool {
		return strings.Contains(run(t, c, `sc.exe query demo`).stdout, "STATE              : 4  RUNNING")
	})
	assert.Contains(t, run(t, c, `sc.exe start demo`).stdout, "FAILED 1056")

	r = run(t, c, `sc.exe stop base`)
	assert.Contains(t, r.stdout, "FAILED 1051", "a running service depends on it")
	assert.True(t, th.ServiceRunning("base"))

	r = run(t, c, `sc.exe stop demo`)
	assert.Contains(t, r.stdout, "STATE              : 3  STOP_PENDING")
	eventually(t, "demo stopped", func() bool {
		return !th.ServiceRunning("demo") && strings.Contains(run(t, c, `sc.exe query demo`).stdout, "1  STOPPED")
	})
	assert.Contains(t, run(t, c, `sc.exe stop demo`).stdout, "FAILED 1062")

	assert.Equal(t, "[SC] DeleteService SUCCESS\r\n", run(t, c, `sc.exe delete demo`).stdout)
	_, ok = th.Service("demo")
	assert.False(t, ok)
	assert.Contains(t, run(t, c, `sc.exe query demo`).stdout, "FAILED 1060")
}

func TestServiceStartErrors(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	require.NoError(t, th.WriteFile(`C:\k\a.exe`, []byte("MZ")))
	run(t, c, `sc.exe create orphan binPath='C:\k\a.exe' start=auto depend='ghost/other'`)
	assert.Contains(t, run(t, c, `sc.exe start orphan`).stdout, "[SC] StartService FAILED 1075:")
	run(t, c, `sc.exe create nobinary binPath='C:\k\missing.exe --x' start=auto`)
	assert.Contains(t, run(t, c, `sc.exe start nobinary`).stdout, "[SC] StartService FAILED 2:")
	assert.Contains(t, run(t, c, `sc.exe start ghost`).stdout, "[SC] StartService: OpenService FAILED 1060:")
	assert.Contains(t, run(t, c, `sc.exe stop ghost`).stdout, "[SC] OpenService FAILED 1060:")
}

func TestDeleteRunningServiceWaitsForStop(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	require.NoError(t, th.WriteFile(`C:\k\a.exe`, []byte("MZ")))
	run(t, c, `sc.exe create a binPath='C:\k\a.exe' start=auto; sc.exe start a`)
	eventually(t, "a running", func() bool { return th.ServiceRunning("a") })
	assert.Equal(t, 0, run(t, c, `sc.exe delete a`).code)
	info, ok := th.Service("a")
	require.True(t, ok, "a running service is only marked for deletion")
	assert.True(t, info.MarkedDelete)
	run(t, c, `sc.exe stop a`)
	eventually(t, "a deleted", func() bool { _, ok := th.Service("a"); return !ok })
}

func TestGetServiceManyAtOnce(t *testing.T) {
	th := startHost(t, Options{Configured: true, Platform: "AWS"})
	c := th.dial(t)
	th.StopService("csi-proxy")
	r := run(t, c, `Get-Service -Name 'kubelet','csi-proxy','cloud-node-manager' -ErrorAction SilentlyContinue | ForEach-Object { $_.Name + '=' + $_.Status }`)
	assert.Equal(t, []string{"kubelet=Running", "csi-proxy=Stopped"}, lines(r.stdout))
	assert.Empty(t, r.stderr)
}

func TestConfiguredNodeRunsWMCOServices(t *testing.T) {
	th := startHost(t, Options{Configured: true, Platform: "Azure"})
	for _, d := range config.NodeDirectories {
		assert.True(t, th.Exists(d), d)
	}
	for _, ws := range config.Services {
		assert.True(t, th.ServiceRunning(ws.Name), ws.Name)
	}
	plain := startHost(t, Options{Configured: true, Platform: "AWS"})
	_, ok := plain.Service("cloud-node-manager")
	assert.False(t, ok, "cloud-node-manager is Azure only")
	info, _ := plain.Service("kube-proxy")
	assert.Equal(t, []string{"hybrid-overlay-node"}, info.Dependencies)

	fresh := startHost(t, Options{})
	assert.False(t, fresh.Exists(`C:\k`))
	_, ok = fresh.Service("kubelet")
	assert.False(t, ok)
	assert.True(t, fresh.ServiceRunning("sshd"))
	keys, err := fresh.ReadFile(`C:\ProgramData\ssh\administrators_authorized_keys`)
	require.NoError(t, err)
	assert.Contains(t, string(keys), "ssh-ed25519 ")
}

func TestServiceEvents(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	c := th.dial(t)
	th.StopService("windows_exporter")
	cmd := `Get-WinEvent -FilterHashtable @{LogName='System'; ProviderName='Service Control Manager'} -MaxEvents 3 | ForEach-Object { $_.TimeCreated.ToString('o') + ' ' + $_.LevelDisplayName + ' ' + $_.Message }`
	r := run(t, c, cmd)
	require.Equal(t, 0, r.code, r.stderr)
	got := lines(r.stdout)
	require.Len(t, got, 3)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}[+-]\d\d:\d\d Error The windows_exporter service terminated unexpectedly\.  It has done this 1 time\(s\)\.  The following corrective action will be taken in 10 milliseconds: Restart the service\.$`, got[0])
	assert.Contains(t, got[1], "Information The ")
	assert.Contains(t, got[1], " service entered the running state.")
}

func TestMisconfiguredKubeletStops(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	c := th.dial(t)
	eventually(t, "kubelet running", func() bool { return th.ServiceRunning("kubelet") })
	for _, name := range []string{"kube-proxy", "hybrid-overlay-node", "kubelet"} {
		r := run(t, c, "sc.exe stop "+name)
		require.Equal(t, 0, r.code, r.stdout)
		eventually(t, name+" stopped", func() bool { info, _ := th.Service(name); return info.State == StateStopped })
	}

	require.NoError(t, th.RemoveFile(`C:\k\kubelet.conf`))
	run(t, c, `sc.exe start kubelet`)
	eventually(t, "kubelet crashed", func() bool { info, _ := th.Service("kubelet"); return info.Crashes == 1 && info.State == StateStopped })
	log, err := th.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^E\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ run\.go:74\] "command failed" err="failed to load kubelet config file`, string(log))
	r := run(t, c, `Get-WinEvent -FilterHashtable @{LogName='System'; ProviderName='Service Control Manager'} -MaxEvents 1 | ForEach-Object { $_.LevelDisplayName + ' ' + $_.Message }`)
	assert.True(t, strings.HasPrefix(r.stdout, "Error The kubelet service terminated unexpectedly."), r.stdout)
}

func TestKubeletBootstrapWritesKubeconfig(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	for _, f := range []string{`C:\k\kubelet.exe`, `C:\k\kubelet.conf`, `C:\k\bootstrap-kubeconfig`} {
		require.NoError(t, th.WriteFile(f, []byte("x")))
	}
	r := run(t, c, fmt.Sprintf(`sc.exe create kubelet binPath=%s start=auto; sc.exe start kubelet`, q(`C:\k\kubelet.exe --config=C:\k\kubelet.conf`)))
	require.Equal(t, 0, r.code, r.stdout)
	eventually(t, "kubeconfig written", func() bool { return th.Exists(`C:\k\kubeconfig`) })
	assert.True(t, th.ServiceRunning("kubelet"))
}

func TestSCOptionsWithSpaceSeparatedValues(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	r := run(t, c, `sc.exe create spaced binPath= 'C:\k\x.exe --config=C:\k\x.conf' start= demand depend= 'a/b'`)
	require.Equal(t, 0, r.code, r.stdout)
	info, ok := th.Service("spaced")
	require.True(t, ok)
	assert.Equal(t, `C:\k\x.exe --config=C:\k\x.conf`, info.BinaryPath)
	assert.Equal(t, "DEMAND_START", info.StartType)
	assert.Equal(t, []string{"a", "b"}, info.Dependencies)
}
