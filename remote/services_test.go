package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/windows"
)

func TestServiceLifecycle(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	for _, exe := range []string{`C:\k\base.exe`, `C:\k\top.exe`} {
		require.NoError(t, h.WriteFile(exe, []byte("MZ")))
	}
	st, err := c.ServiceQuery(ctx, "base")
	require.NoError(t, err)
	assert.False(t, st.Exists, "1060 means missing, not an error")

	require.NoError(t, c.CreateService(ctx, ServiceSpec{Name: "base", BinPath: `C:\k\base.exe --v=2`,
		Description: "it's the base", Recovery: true}))
	require.NoError(t, c.CreateService(ctx, ServiceSpec{Name: "top", BinPath: `C:\k\top.exe`, DependsOn: []string{"base"}}))
	info, ok := h.Service("base")
	require.True(t, ok)
	assert.Equal(t, `C:\k\base.exe --v=2`, info.BinaryPath)
	assert.Equal(t, "AUTO_START", info.StartType)
	assert.Equal(t, "it's the base", info.Description)
	assert.Len(t, info.Recovery, 4)
	info, _ = h.Service("top")
	assert.Equal(t, []string{"base"}, info.Dependencies)

	err = c.CreateService(ctx, ServiceSpec{Name: "base", BinPath: `C:\k\base.exe`})
	assert.ErrorIs(t, err, ErrServiceExists)

	require.NoError(t, c.StartService(ctx, "top"), "starting top starts base first")
	assert.True(t, h.ServiceRunning("top"))
	assert.True(t, h.ServiceRunning("base"))
	require.NoError(t, c.StartService(ctx, "top"), "1056 (already running) is success")
	st, err = c.ServiceQuery(ctx, "top")
	require.NoError(t, err)
	assert.Equal(t, ServiceStatus{Name: "top", Exists: true, State: ServiceRunning}, st)

	err = c.StopService(ctx, "base")
	require.ErrorIs(t, err, ErrServiceHasDependents)
	assert.Contains(t, err.Error(), "1051")
	require.NoError(t, c.StopService(ctx, "top"))
	assert.False(t, h.ServiceRunning("top"))
	require.NoError(t, c.StopService(ctx, "top"), "1062 (not started) is success")

	states, err := c.ServiceStates(ctx, "base", "top", "ghost")
	require.NoError(t, err)
	assert.Equal(t, map[string]ServiceState{"base": ServiceRunning, "top": ServiceStopped}, states)

	require.NoError(t, c.DeleteService(ctx, "top"))
	_, ok = h.Service("top")
	assert.False(t, ok)
	require.NoError(t, c.DeleteService(ctx, "top"), "deleting a missing service is success")
}

func TestServiceNamesAndArgumentsAreValidated(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	_, err := c.ServiceQuery(ctx, "kube let; Restart-Computer")
	assert.ErrorContains(t, err, "invalid Windows service name")
	err = c.CreateService(ctx, ServiceSpec{Name: "x", BinPath: `C:\k\x.exe --name "quoted"`})
	assert.ErrorContains(t, err, "double quote")
	assert.Empty(t, h.Commands(), "nothing reaches the host")
}

func TestStartOfAMissingBinaryReportsSCError(t *testing.T) {
	_, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	require.NoError(t, c.CreateService(ctx, ServiceSpec{Name: "nobin", BinPath: `C:\k\nobin.exe`}))
	err := c.StartService(ctx, "nobin")
	var scErr *SCError
	require.ErrorAs(t, err, &scErr)
	assert.Equal(t, 2, scErr.Code)
	assert.Equal(t, "nobin", scErr.Service)
}

// nodeServiceSpecs are the services WMCO installs on a non-Azure node, with binaries on the host.
func nodeServiceSpecs(t testing.TB, h *windows.Host) []ServiceSpec {
	t.Helper()
	var specs []ServiceSpec
	for _, s := range config.Services {
		if s.Platform != "" {
			continue
		}
		// Stand-ins, not the programs the simulator runs for WMCO's executables (a kube-proxy.exe without
		// its configuration exits as the real one does): these tests are about the service manager.
		exe := `C:\k\svc-` + s.Name + ".exe"
		require.NoError(t, h.WriteFile(exe, []byte("MZ")))
		specs = append(specs, ServiceSpec{Name: s.Name, BinPath: exe, DependsOn: s.DependsOn,
			Description: "OpenShift managed " + s.Name, Recovery: true})
	}
	for _, f := range []string{`C:\k\kubelet.conf`, `C:\k\bootstrap-kubeconfig`} {
		require.NoError(t, h.WriteFile(f, []byte("apiVersion: v1\n")))
	}
	return specs
}

func TestEnsureServicesInstallsAndStartsTheNodeServicesInFewRoundTrips(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	specs := nodeServiceSpecs(t, h)
	require.Len(t, specs, 7)
	require.NoError(t, c.EnsureServices(ctx, specs))
	for _, s := range specs {
		assert.True(t, h.ServiceRunning(s.Name), s.Name)
		info, _ := h.Service(s.Name)
		assert.Equal(t, s.DependsOn, info.Dependencies)
	}
	// Get-Help, Get-Service, one create line, one start line, then Get-Service polls.
	assert.LessOrEqual(t, c.Stats().RoundTrips, int64(4+20))
	assert.GreaterOrEqual(t, c.Stats().RoundTrips, int64(5))

	before := c.Stats().RoundTrips
	require.NoError(t, c.EnsureServices(ctx, specs))
	assert.Equal(t, before+2, c.Stats().RoundTrips, "all running: one Get-Service to see it and one to confirm")
}

func TestParseSCOutput(t *testing.T) {
	out := "[SC] CreateService SUCCESS\r\n[SC] ChangeServiceConfig2 SUCCESS\r\n" +
		"[SC] StartService FAILED 1056:\r\n\r\nAn instance of the service is already running.\r\n\r\n" +
		"\r\nSERVICE_NAME: kubelet\r\n        TYPE               : 10  WIN32_OWN_PROCESS\r\n" +
		"        STATE              : 2  START_PENDING\r\n"
	got := parseSC(out)
	require.Len(t, got, 4)
	assert.False(t, got[0].failed)
	assert.Equal(t, scResult{failed: true, op: "StartService", code: 1056, message: "An instance of the service is already running."}, got[2])
	assert.Equal(t, ServiceStartPending, got[3].state)
}

func TestServiceConfigAndFileHelpers(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	require.NoError(t, h.WriteFile(`C:\k\a.exe`, []byte("MZ")))
	require.NoError(t, c.CreateService(ctx, ServiceSpec{Name: "a", BinPath: `C:\k\a.exe --flag=C:\x`, DependsOn: []string{"b", "c"}}))
	cfg, err := c.ServiceConfig(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, ServiceConfig{Name: "a", BinPath: `C:\k\a.exe --flag=C:\x`, StartType: "AUTO_START", Dependencies: []string{"b", "c"}}, cfg)
	_, err = c.ServiceConfig(ctx, "ghost")
	assert.ErrorIs(t, err, ErrServiceNotFound)

	require.NoError(t, c.MakeDir(ctx, `C:\k\containerd\registries\quay.io`))
	require.NoError(t, c.MakeDir(ctx, `C:\k\containerd\registries\mcr.microsoft.com`))
	names, err := c.ListDir(ctx, `C:\k\containerd\registries`)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"quay.io", "mcr.microsoft.com"}, names)
	require.NoError(t, c.Remove(ctx, `C:\k\containerd\registries`, true))
	exists, err := c.Exists(ctx, `C:\k\containerd\registries`)
	require.NoError(t, err)
	assert.False(t, exists)
	routes, err := c.Routes(ctx)
	require.NoError(t, err)
	assert.Contains(t, routes, "0.0.0.0")
}
