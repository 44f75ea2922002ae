package remote

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

func TestUploadWritesSkipsUnchangedAndReportsProgress(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	local := filepath.Join(t.TempDir(), "kubelet.exe")
	kubelet := randomBytes(t, 300_000)
	require.NoError(t, os.WriteFile(local, kubelet, 0o600))
	files := []Upload{
		{Remote: `C:\k\kubelet.exe`, Local: local},
		{Remote: `C:\k\cni\config\cni.conf`, Data: []byte(`{"cniVersion":"0.2.0"}`)},
		{Remote: `C:\k\it's here\x.txt`, Data: []byte("quoted dir")},
	}
	var mu sync.Mutex
	var last, total int64
	opts := UploadOptions{Parallel: 3, Progress: func(done, all int64) {
		mu.Lock()
		defer mu.Unlock()
		assert.GreaterOrEqual(t, done, last, "progress never goes back")
		last, total = done, all
	}}
	report, err := c.Upload(ctx, files, opts)
	require.NoError(t, err)
	assert.Len(t, report.Uploaded, 3)
	assert.Empty(t, report.Skipped)
	assert.Equal(t, total, last)
	assert.EqualValues(t, len(kubelet)+len(files[1].Data)+len(files[2].Data), total)
	got, err := h.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(kubelet, got))
	got, err = h.ReadFile(`C:\k\it's here\x.txt`)
	require.NoError(t, err)
	assert.Equal(t, "quoted dir", string(got))

	// Same content again: nothing is sent, the hashes match.
	last = 0
	report, err = c.Upload(ctx, files, opts)
	require.NoError(t, err)
	assert.Empty(t, report.Uploaded)
	assert.Len(t, report.Skipped, 3)
	assert.Equal(t, total, last, "skipped files count as done")

	// A changed file is sent again, the others skipped.
	files[1].Data = []byte(`{"cniVersion":"0.3.1"}`)
	last = 0
	report, err = c.Upload(ctx, files, opts)
	require.NoError(t, err)
	assert.Equal(t, []string{`C:\k\cni\config\cni.conf`}, report.Uploaded)
	got, _ = h.ReadFile(`C:\k\cni\config\cni.conf`)
	assert.Equal(t, `{"cniVersion":"0.3.1"}`, string(got))

	exists, err := c.Exists(ctx, `C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.True(t, exists)
	exists, err = c.Exists(ctx, `C:\k\nope.exe`)
	require.NoError(t, err)
	assert.False(t, exists)
}

func TestDropMidTransferLeavesTheOldTargetIntact(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	old := []byte("old kubelet, still working")
	require.NoError(t, h.WriteFile(`C:\k\kubelet.exe`, old))
	newer := randomBytes(t, 2_000_000)
	h.DropAfterBytes(400) // the SFTP session is cut after a few write acknowledgements
	_, err := c.Upload(ctx, []Upload{{Remote: `C:\k\kubelet.exe`, Data: newer}}, UploadOptions{Force: true})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrConnectionLost)
	got, err := h.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.Equal(t, old, got, "an interrupted upload must not touch the target")

	// The next upload redials and completes.
	report, err := c.Upload(ctx, []Upload{{Remote: `C:\k\kubelet.exe`, Data: newer}}, UploadOptions{})
	require.NoError(t, err)
	assert.Len(t, report.Uploaded, 1)
	got, _ = h.ReadFile(`C:\k\kubelet.exe`)
	assert.True(t, bytes.Equal(newer, got))
}

func TestDownload(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	data := randomBytes(t, 100_000)
	require.NoError(t, h.WriteFile(`C:\var\log\kubelet\kubelet.log`, data))
	local := filepath.Join(t.TempDir(), "kubelet.log")
	var seen int64
	require.NoError(t, c.DownloadFile(ctx, `C:\var\log\kubelet\kubelet.log`, local, func(n int64) { seen = n }))
	got, err := os.ReadFile(local)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))
	assert.EqualValues(t, len(data), seen)

	err = c.DownloadFile(ctx, `C:\var\log\missing.log`, filepath.Join(t.TempDir(), "m"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `C:\var\log\missing.log`)
}

func TestSFTPPathForms(t *testing.T) {
	assert.Equal(t, "/C:/k/kubelet.exe", SFTPPath(`C:\k\kubelet.exe`))
	assert.Equal(t, "/tmp/x", SFTPPath("/tmp/x"))
	assert.Equal(t, `C:\k\kubelet.exe`, WindowsPath("/C:/k/kubelet.exe"))
	assert.Equal(t, "/tmp/x", WindowsPath("/tmp/x"))
}

func TestUploadRenamesWithMoveItemWithoutPosixRename(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	c.shellRenameOnly = true
	ctx := testCtx(t)
	require.NoError(t, h.WriteFile(`C:\k\kube-proxy.exe`, []byte("old")))
	_, err := c.Upload(ctx, []Upload{{Remote: `C:\k\kube-proxy.exe`, Data: []byte("new")}}, UploadOptions{})
	require.NoError(t, err)
	got, _ := h.ReadFile(`C:\k\kube-proxy.exe`)
	assert.Equal(t, "new", string(got))
	moved := false
	for _, cmd := range h.Commands() {
		moved = moved || strings.HasPrefix(cmd, "Move-Item -LiteralPath 'C:\\k\\kube-proxy.exe.wmcon-")
	}
	assert.True(t, moved, "renamed with Move-Item: %v", h.Commands())
	names, err := c.ListDir(ctx, `C:\k`)
	require.NoError(t, err)
	assert.Equal(t, []string{"kube-proxy.exe"}, names, "no temporary file left")
}

// TestTransferLossSettles: after a transfer lost its link, the connection is given a moment to be seen
// dead (so the next call dials anew rather than reusing it); when it lives on, only the SFTP session
// ended, and its client is dropped so the next transfer opens another.
func TestTransferLossSettles(t *testing.T) {
	dying := &connection{dead: make(chan struct{}), sftp: &sftp.Client{}}
	go func() { time.Sleep(50 * time.Millisecond); close(dying.dead) }()
	dying.settleAfterLoss()
	assert.False(t, dying.alive(), "waited until the watcher saw the connection end")

	living := &connection{dead: make(chan struct{}), sftp: &sftp.Client{}}
	living.settleAfterLoss()
	assert.True(t, living.alive())
	assert.Nil(t, living.sftp, "the connection lives on: its dead SFTP client is not reused")
}
