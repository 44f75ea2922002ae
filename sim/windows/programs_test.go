package windows

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

func TestParseLaunchUnwrapsKubeLogRunner(t *testing.T) {
	l := parseLaunch(`C:\k\kube-log-runner.exe -log-file=C:\var\log\kubelet\kubelet.log C:\k\kubelet.exe --config=C:\k\kubelet.conf --node-ip=127.0.0.5 --v=2`)
	assert.True(t, l.runner)
	assert.Equal(t, `C:\var\log\kubelet\kubelet.log`, l.logFile)
	assert.Equal(t, `C:\k\kubelet.exe`, l.exe)
	assert.Equal(t, []string{`--config=C:\k\kubelet.conf`, "--node-ip=127.0.0.5", "--v=2"}, l.args)

	l = parseLaunch(`"C:\Program Files\x\x.exe" --node win-a --k8s-cacert C:\k\ca.crt`)
	assert.False(t, l.runner)
	assert.Equal(t, `C:\Program Files\x\x.exe`, l.exe)
	v, ok := flagValue(l.args, "node")
	assert.True(t, ok)
	assert.Equal(t, "win-a", v)
	v, _ = flagValue(l.args, "k8s-cacert")
	assert.Equal(t, `C:\k\ca.crt`, v)
	_, ok = flagValue(l.args, "kubeconfig")
	assert.False(t, ok)
}

// A service whose program misses a file it opens at start is accepted by sc.exe start, then terminates
// with an SCM error event and its program's error in its log, as on Windows; once the file is there it runs.
func TestServicesRefuseToRunWithoutTheirFiles(t *testing.T) {
	th := startHost(t, Options{Addr: "127.0.0.1:0", Configured: true})
	c := th.dial(t)
	stopAndWait(t, th, c, "kube-proxy")
	stopAndWait(t, th, c, "hybrid-overlay-node")

	cases := []struct {
		service, file, logText string
		deps                   []string // started before the file goes, so only the service itself misses it
	}{
		{"containerd", `C:\k\containerd\containerd_conf.toml`, `level=fatal msg="open C:\\k\\containerd\\containerd_conf.toml: The system cannot find the file specified."`, nil},
		{"hybrid-overlay-node", `C:\k\kubeconfig`, `open C:\\k\\kubeconfig: The system cannot find the file specified.`, []string{"kubelet"}},
		{"kube-proxy", `C:\k\kubeconfig`, `stat C:\\k\\kubeconfig: The system cannot find the file specified.`, []string{"kubelet", "hybrid-overlay-node"}},
	}
	for _, tc := range cases {
		t.Run(tc.service, func(t *testing.T) {
			for _, d := range tc.deps {
				if !th.ServiceRunning(d) {
					run(t, c, `sc.exe start `+d)
				}
				eventually(t, d+" running", func() bool { return th.ServiceRunning(d) })
			}
			saved, err := th.ReadFile(tc.file)
			require.NoError(t, err)
			t.Cleanup(func() { _ = th.WriteFile(tc.file, saved) })
			if th.ServiceRunning(tc.service) {
				th.StopService(tc.service)
			}
			require.NoError(t, th.RemoveFile(tc.file))
			info, _ := th.Service(tc.service)
			crashes := info.Crashes
			r := run(t, c, `sc.exe start `+tc.service)
			assert.Contains(t, r.stdout, "START_PENDING", "sc.exe start itself succeeds")
			eventually(t, tc.service+" terminated", func() bool {
				info, _ := th.Service(tc.service)
				return info.Crashes > crashes // a process that exits is started again by its recovery actions
			})
			logData, err := th.ReadFile(logPathOf(tc.service))
			require.NoError(t, err)
			assert.Contains(t, string(logData), tc.logText)

			require.NoError(t, th.WriteFile(tc.file, saved))
			run(t, c, `sc.exe start `+tc.service)
			eventually(t, tc.service+" running", func() bool { return th.ServiceRunning(tc.service) })
		})
	}
}

func logPathOf(service string) string {
	return map[string]string{
		"kube-proxy":          `C:\var\log\kube-proxy\kube-proxy.log`,
		"hybrid-overlay-node": `C:\var\log\hybrid-overlay\hybrid-overlay.log`,
		"containerd":          `C:\var\log\containerd\containerd.log`,
	}[service]
}

// kube-log-runner.exe needs its log directory and the program it wraps; without either the service
// terminates at once. A missing kube-log-runner.exe itself is sc.exe's error 2.
func TestKubeLogRunnerNeedsItsProgramAndLogDirectory(t *testing.T) {
	th := startHost(t, Options{Addr: "127.0.0.1:0"})
	c := th.dial(t)
	require.NoError(t, th.WriteFile(`C:\k\kube-log-runner.exe`, fakeBinary("kube-log-runner.exe")))
	run(t, c, `sc.exe create app binPath='C:\k\kube-log-runner.exe -log-file=C:\var\log\app\app.log C:\k\app.exe --v=2' start=auto`)

	run(t, c, `sc.exe start app`)
	eventually(t, "app terminated (no log dir)", func() bool { info, _ := th.Service("app"); return info.Crashes == 1 })
	require.NoError(t, th.fs.mkdirAll(`C:\var\log\app`))
	run(t, c, `sc.exe start app`)
	eventually(t, "app terminated (no app.exe)", func() bool { info, _ := th.Service("app"); return info.Crashes == 2 })
	logData, err := th.ReadFile(`C:\var\log\app\app.log`)
	require.NoError(t, err)
	assert.Contains(t, string(logData), `app.exe`)
	assert.Contains(t, string(logData), `file does not exist`)
	assert.NotContains(t, string(logData), "failed to create log file", "with no directory there is no log to write to")

	require.NoError(t, th.WriteFile(`C:\k\app.exe`, fakeBinary("app.exe")))
	run(t, c, `sc.exe start app`)
	eventually(t, "app running", func() bool { return th.ServiceRunning("app") })

	assert.Error(t, th.RemoveFile(`C:\k\kube-log-runner.exe`), "a running program's file cannot be deleted")
	stopAndWait(t, th, c, "app")
	require.NoError(t, th.RemoveFile(`C:\k\kube-log-runner.exe`))
	r := run(t, c, `sc.exe start app`)
	assert.Contains(t, r.stdout, "FAILED 2:")
}

// A Program runs while its service runs: it sees its command line and files, ends when the service
// stops, and its exit before that is the service terminating.
func TestProgramsRunWhileTheirServiceRuns(t *testing.T) {
	var runs atomic.Int32
	var sawConfig atomic.Bool
	fail := make(chan error, 1)
	prog := func(ctx context.Context, p *Process) error {
		runs.Add(1)
		conf, _ := p.Flag("config")
		data, err := p.ReadFile(conf)
		sawConfig.Store(err == nil && string(data) == "conf")
		select {
		case <-ctx.Done():
			return nil
		case err := <-fail:
			return err
		}
	}
	th := startHost(t, Options{Addr: "127.0.0.1:0", Programs: map[string]Program{"App.exe": prog}})
	c := th.dial(t)
	require.NoError(t, th.WriteFile(`C:\k\app.exe`, fakeBinary("app.exe")))
	require.NoError(t, th.WriteFile(`C:\k\app.conf`, []byte("conf")))
	require.NoError(t, th.fs.mkdirAll(`C:\var\log\app`))
	run(t, c, `sc.exe create app binPath='C:\k\app.exe --config=C:\k\app.conf' start=auto`)
	run(t, c, `sc.exe start app`)
	eventually(t, "program started", func() bool { return runs.Load() == 1 && sawConfig.Load() })

	stopAndWait(t, th, c, "app")
	info, _ := th.Service("app")
	assert.Zero(t, info.Crashes, "a stop is not a crash")

	run(t, c, `sc.exe start app`)
	eventually(t, "program restarted", func() bool { return runs.Load() == 2 })
	fail <- errors.New("boom")
	eventually(t, "app terminated", func() bool { info, _ := th.Service("app"); return info.Crashes == 1 })
	assert.Equal(t, int32(2), runs.Load())
}

func stopAndWait(t *testing.T, th *testHost, c *ssh.Client, service string) {
	t.Helper()
	run(t, c, `sc.exe stop `+service)
	eventually(t, service+" stopped", func() bool { info, _ := th.Service(service); return info.State == StateStopped })
}

// A process that exits on its own is restarted by its service's recovery actions after their delays, as
// Windows does; one a test crashes with StopService, or a service without recovery actions, stays down.
func TestRecoveryActionsRestartAnExitedProcess(t *testing.T) {
	var runs atomic.Int32
	exitTwice := func(ctx context.Context, p *Process) error {
		if runs.Add(1) <= 2 {
			return errors.New("not yet")
		}
		<-ctx.Done()
		return nil
	}
	th := startHost(t, Options{Programs: map[string]Program{"flaky.exe": exitTwice}})
	require.NoError(t, th.WriteFile(`C:\k\flaky.exe`, []byte("MZ")))
	c := th.dial(t)
	require.Contains(t, run(t, c, `sc.exe create flaky binPath='C:\k\flaky.exe' start=auto`).stdout, "SUCCESS")
	require.Contains(t, run(t, c, `sc.exe failure flaky reset= 600 actions= restart/10/restart/30`).stdout, "SUCCESS")
	run(t, c, `sc.exe start flaky`)
	eventually(t, "running after two restarts", func() bool { return runs.Load() == 3 && th.ServiceRunning("flaky") })
	info, _ := th.Service("flaky")
	assert.Equal(t, 2, info.Crashes)
	r := run(t, c, `Get-WinEvent -FilterHashtable @{LogName='System'; ProviderName='Service Control Manager'} -MaxEvents 20 | ForEach-Object { $_.Message }`)
	assert.Contains(t, r.stdout, "The flaky service terminated unexpectedly.  It has done this 2 time(s).  The following corrective action will be taken in 30 milliseconds: Restart the service.")

	th.StopService("flaky")
	time.Sleep(100 * time.Millisecond)
	assert.False(t, th.ServiceRunning("flaky"), "a crash the test made is not recovered")

	runs.Store(0)
	require.Contains(t, run(t, c, `sc.exe create once binPath='C:\k\flaky.exe' start=demand`).stdout, "SUCCESS")
	run(t, c, `sc.exe start once`)
	eventually(t, "the process exited", func() bool { info, _ := th.Service("once"); return info.Crashes == 1 })
	time.Sleep(100 * time.Millisecond)
	assert.False(t, th.ServiceRunning("once"), "no recovery actions: it stays stopped")
}

// containerd opens its pipe a moment after its service is RUNNING.
func TestContainerdPipeOpensAMomentAfterTheService(t *testing.T) {
	th := startHost(t, Options{Configured: true, ContainerdPipeDelay: 300 * time.Millisecond})
	eventually(t, "containerd runs", func() bool { return th.ServiceRunning("containerd") })
	assert.False(t, th.PipeOpen(ContainerdPipe), "not yet")
	eventually(t, "the pipe opens", func() bool { return th.PipeOpen(ContainerdPipe) })
	th.StopService("containerd")
	assert.False(t, th.PipeOpen(ContainerdPipe), "gone with containerd")

	now := startHost(t, Options{Configured: true, ContainerdPipeDelay: -1})
	eventually(t, "containerd runs", func() bool { return now.ServiceRunning("containerd") })
	assert.True(t, now.PipeOpen(ContainerdPipe))
}
