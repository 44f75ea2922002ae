package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

func TestBatchedReadsAndWritesOneRoundTripEach(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{Configured: true})
	c := clientFor(t, newTestPool(t, key, nil), h)
	ctx := context.Background()
	_, err := c.Shell(ctx)
	require.NoError(t, err)
	rt := func(f func()) int64 {
		before := c.Stats().RoundTrips
		f()
		return c.Stats().RoundTrips - before
	}

	var hashes map[string]string
	assert.EqualValues(t, 1, rt(func() {
		hashes, err = c.FileHashes(ctx, []string{`C:\k\kubelet.exe`, `C:\k\nope.exe`, `C:\K\KUBE-PROXY.EXE`, `C:\k`})
	}))
	require.NoError(t, err)
	data, err := h.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{`C:\k\kubelet.exe`: strings.ToUpper(hex.EncodeToString(sum256(data))), `C:\K\KUBE-PROXY.EXE`: hashes[`C:\K\KUBE-PROXY.EXE`]}, hashes)
	assert.Len(t, hashes[`C:\K\KUBE-PROXY.EXE`], 64)

	var exist map[string]bool
	assert.EqualValues(t, 1, rt(func() { exist, err = c.PathsExist(ctx, []string{`C:\k`, `C:\nope`, `C:\k\kubelet.exe`}) }))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{`C:\k`: true, `C:\nope`: false, `C:\k\kubelet.exe`: true}, exist)

	assert.EqualValues(t, 1, rt(func() { err = c.MakeDirs(ctx, []string{`C:\new\a`, `C:\new\b`, `C:\k`}) }))
	require.NoError(t, err)
	assert.True(t, h.Exists(`C:\new\a`) && h.Exists(`C:\new\b`))
	assert.EqualValues(t, 2, rt(func() { err = c.RemovePaths(ctx, []string{`C:\new`, `C:\gone`}) }))
	require.NoError(t, err)
	assert.False(t, h.Exists(`C:\new`))

	assert.EqualValues(t, 1, rt(func() { err = c.SetEnvs(ctx, map[string]string{"HTTP_PROXY": "http://p:3128", "NO_PROXY": ""}) }))
	require.NoError(t, err)
	var env map[string]string
	assert.EqualValues(t, 1, rt(func() { env, err = c.GetEnvs(ctx, []string{"NO_PROXY", "HTTP_PROXY"}) }))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"HTTP_PROXY": "http://p:3128"}, env)

	var cfgs map[string]ServiceConfig
	assert.EqualValues(t, 1, rt(func() { cfgs, err = c.ServiceConfigs(ctx, "containerd", "nope", "kubelet") }))
	require.NoError(t, err)
	require.Len(t, cfgs, 2)
	assert.Equal(t, []string{"containerd"}, cfgs["kubelet"].Dependencies)
	assert.Contains(t, cfgs["kubelet"].BinPath, `C:\k\kubelet.exe --config=C:\k\kubelet.conf`)
	assert.Contains(t, cfgs["containerd"].BinPath, `containerd.exe`)
}

func sum256(b []byte) []byte { s := sha256.Sum256(b); return s[:] }
