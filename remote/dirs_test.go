package remote

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

const regDir = `C:\k\containerd\registries`

func TestReplaceDirSwapsWholeTreeAndReadsItBack(t *testing.T) {
	h, c := simClient(t, windows.Options{Configured: true}, nil)
	ctx := testCtx(t)
	require.NoError(t, h.WriteFile(regDir+`\stale.io\hosts.toml`, []byte("old")))
	files := map[string][]byte{
		`quay.io\hosts.toml`:              []byte("server = \"https://quay.io/v2\"\r\n"),
		`registry.local_5000_\hosts.toml`: []byte("server = \"https://registry.local:5000/v2\"\r\n"),
	}
	var steps []string
	require.NoError(t, c.ReplaceDir(ctx, regDir, files, ReplaceDirOptions{Progress: func(s string) { steps = append(steps, s) }}))
	assert.False(t, h.Exists(regDir+`\stale.io`), "the old tree is gone, not merged")

	got, exists, err := c.ReadTree(ctx, regDir)
	require.NoError(t, err)
	assert.True(t, exists)
	assert.Equal(t, files, got)

	names, err := c.ListDir(ctx, `C:\k\containerd`)
	require.NoError(t, err)
	for _, n := range names {
		assert.NotContains(t, n, "registries.", "no staged or old copy left beside the directory")
	}
	var swaps int
	for _, cmd := range h.Executed() {
		if strings.Contains(cmd, "Move-Item") {
			swaps++
			assert.Contains(t, cmd, "-ErrorAction Stop")
		}
	}
	assert.Equal(t, 1, swaps, "one command line swaps the directories")
	assert.NotEmpty(t, steps)
}

// A reader never sees part of the new tree: once one new file is visible, all are.
func TestReplaceDirNeverShowsHalfATree(t *testing.T) {
	h, c := simClient(t, windows.Options{Configured: true}, nil)
	ctx := testCtx(t)
	old := map[string][]byte{`a.io\hosts.toml`: []byte("old-a"), `b.io\hosts.toml`: []byte("old-b")}
	require.NoError(t, c.ReplaceDir(ctx, regDir, old, ReplaceDirOptions{}))
	next := map[string][]byte{`a.io\hosts.toml`: []byte("new-a"), `b.io\hosts.toml`: []byte("new-b")}

	var stop atomic.Bool
	var bad atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			a, errA := h.ReadFile(regDir + `\a.io\hosts.toml`)
			if errA != nil || string(a) != "new-a" {
				continue
			}
			if b, err := h.ReadFile(regDir + `\b.io\hosts.toml`); err != nil || string(b) != "new-b" {
				bad.Store("saw new a.io with b.io " + string(b))
			}
		}
	}()
	require.NoError(t, c.ReplaceDir(ctx, regDir, next, ReplaceDirOptions{}))
	stop.Store(true)
	wg.Wait()
	assert.Nil(t, bad.Load())
}

func TestReplaceDirWaitsForAReaderToLetGo(t *testing.T) {
	h, c := simClient(t, windows.Options{Configured: true}, nil)
	ctx := testCtx(t)
	require.NoError(t, h.WriteFile(regDir+`\quay.io\hosts.toml`, []byte("old")))
	release, err := h.HoldOpen(regDir + `\quay.io\hosts.toml`)
	require.NoError(t, err)
	time.AfterFunc(250*time.Millisecond, release)

	var mu sync.Mutex
	var steps []string
	err = c.ReplaceDir(ctx, regDir, map[string][]byte{`quay.io\hosts.toml`: []byte("new")},
		ReplaceDirOptions{Tries: 6, RetryDelay: 50 * time.Millisecond, Progress: func(s string) {
			mu.Lock()
			defer mu.Unlock()
			steps = append(steps, s)
		}})
	require.NoError(t, err)
	got, err := h.ReadFile(regDir + `\quay.io\hosts.toml`)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	assert.Contains(t, strings.Join(steps, "\n"), "is in use on the host")
}

func TestReplaceDirGivesUpOnAHeldDirectoryLeavingTheOldTree(t *testing.T) {
	h, c := simClient(t, windows.Options{Configured: true}, nil)
	ctx := testCtx(t)
	require.NoError(t, h.WriteFile(regDir+`\quay.io\hosts.toml`, []byte("old")))
	release, err := h.HoldOpen(regDir + `\quay.io\hosts.toml`)
	require.NoError(t, err)
	t.Cleanup(release)

	err = c.ReplaceDir(ctx, regDir, map[string][]byte{`quay.io\hosts.toml`: []byte("new")},
		ReplaceDirOptions{Tries: 2, RetryDelay: 20 * time.Millisecond})
	var inUse *DirInUseError
	require.True(t, errors.As(err, &inUse), "got %v", err)
	assert.Contains(t, err.Error(), "still in place, unchanged")
	got, err := h.ReadFile(regDir + `\quay.io\hosts.toml`)
	require.NoError(t, err)
	assert.Equal(t, "old", string(got))
	names, err := c.ListDir(ctx, `C:\k\containerd`)
	require.NoError(t, err)
	for _, n := range names {
		assert.NotContains(t, n, "registries.", "the staged copy is removed")
	}
}

func TestReplaceDirOnAHostWithoutTheDirectory(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	_, exists, err := c.ReadTree(ctx, regDir)
	require.NoError(t, err)
	assert.False(t, exists)
	require.NoError(t, h.WriteFile(`C:\k\containerd\containerd_conf.toml`, []byte("x")))
	require.NoError(t, c.ReplaceDir(ctx, regDir, map[string][]byte{`quay.io\hosts.toml`: []byte("new")}, ReplaceDirOptions{}))
	got, exists, err := c.ReadTree(ctx, regDir)
	require.NoError(t, err)
	assert.True(t, exists)
	assert.Equal(t, map[string][]byte{`quay.io\hosts.toml`: []byte("new")}, got)

	// An empty tree is an empty directory: containerd then uses every source directly.
	require.NoError(t, c.ReplaceDir(ctx, regDir, nil, ReplaceDirOptions{}))
	got, exists, err = c.ReadTree(ctx, regDir)
	require.NoError(t, err)
	assert.True(t, exists)
	assert.Empty(t, got)
}

func TestReplaceDirRefusesEscapingPaths(t *testing.T) {
	_, c := simClient(t, windows.Options{Configured: true}, nil)
	for _, rel := range []string{`..\x`, `C:\x`, `a/b`, `\x`, ``} {
		err := c.ReplaceDir(testCtx(t), regDir, map[string][]byte{rel: []byte("x")}, ReplaceDirOptions{})
		assert.Error(t, err, rel)
	}
}

// Under --read-only the swap is refused before anything is written: the old tree stays, nothing is staged.
func TestReplaceDirIsRefusedReadOnly(t *testing.T) {
	h, c := simClient(t, windows.Options{Configured: true}, func(cfg *Config) { cfg.ReadOnly = true })
	ctx := testCtx(t)
	require.NoError(t, h.WriteFile(regDir+`\stale.io\hosts.toml`, []byte("old")))
	err := c.ReplaceDir(ctx, regDir, map[string][]byte{`quay.io\hosts.toml`: []byte("new")}, ReplaceDirOptions{})
	var ro *ReadOnlyError
	require.ErrorAs(t, err, &ro)
	assert.Contains(t, err.Error(), "--read-only")
	got, _, err := c.ReadTree(ctx, regDir)
	require.NoError(t, err, "reading stays allowed")
	assert.Equal(t, map[string][]byte{`stale.io\hosts.toml`: []byte("old")}, got)
	names, err := c.ListDir(ctx, `C:\k\containerd`)
	require.NoError(t, err)
	for _, n := range names {
		assert.NotContains(t, n, "registries.", "nothing staged beside the directory")
	}
}
