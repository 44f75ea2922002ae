package windows

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/pkg/sftp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newSFTP(t *testing.T, th *testHost) *sftp.Client {
	t.Helper()
	sc, err := sftp.NewClient(th.dial(t))
	require.NoError(t, err)
	t.Cleanup(func() { sc.Close() })
	return sc
}

func TestSFTPPutGetRenameStat(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	sc := newSFTP(t, th)
	payload := bytes.Repeat([]byte("kubelet-binary-"), 10000)

	f, err := sc.Create("/C:/k/kubelet.exe.tmp")
	require.NoError(t, err)
	_, err = f.Write(payload)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	st, err := sc.Stat("/C:/K/KUBELET.EXE.TMP")
	require.NoError(t, err, "paths are case-insensitive")
	assert.Equal(t, int64(len(payload)), st.Size())
	assert.False(t, st.IsDir())

	require.Error(t, sc.Rename("/C:/k/kubelet.exe.tmp", "/C:/k/kubelet.exe"), "plain SFTP rename refuses an existing target")
	th.StopService("kubelet") // a running kubelet.exe cannot be replaced (TestRunningServiceBinaryIsLocked)
	require.NoError(t, sc.PosixRename("/C:/k/kubelet.exe.tmp", "/C:/k/kubelet.exe"))
	got, err := th.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.Equal(t, payload, got)

	r, err := sc.Open("/C:/k/kubelet.exe")
	require.NoError(t, err)
	back, err := io.ReadAll(r)
	require.NoError(t, err)
	r.Close()
	assert.Equal(t, payload, back)

	require.NoError(t, sc.Rename("/C:/k/kubelet.exe", "/C:/Temp/moved.exe"))
	assert.True(t, th.Exists(`C:\Temp\moved.exe`))

	_, err = sc.Stat("/C:/k/nothing")
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = sc.Create("/C:/no/such/dir/file")
	assert.Error(t, err, "the parent directory must exist")

	require.NoError(t, sc.Mkdir("/C:/k/newdir"))
	entries, err := sc.ReadDir("/C:/k")
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Contains(t, names, "newdir")
	assert.Contains(t, names, "kubelet.conf")

	root, err := sc.ReadDir("/")
	require.NoError(t, err)
	require.Len(t, root, 1)
	assert.Equal(t, "C:", root[0].Name())

	wd, err := sc.Getwd()
	require.NoError(t, err)
	assert.Equal(t, "/C:/Users/Administrator", wd)
}

// Windows maps a running program's file: it cannot be replaced, overwritten or deleted until the process
// exits, though it can be renamed away (and stays locked under its new name).
func TestRunningServiceBinaryIsLocked(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	require.True(t, th.ServiceRunning("kubelet"))
	sc := newSFTP(t, th)
	old, err := th.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	f, err := sc.Create("/C:/k/kubelet.exe.new")
	require.NoError(t, err)
	_, err = f.Write([]byte("new kubelet"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	denied := "permission denied"
	assert.ErrorContains(t, sc.PosixRename("/C:/k/kubelet.exe.new", "/C:/k/kubelet.exe"), denied, "replace")
	_, err = sc.Create("/C:/k/kubelet.exe")
	assert.ErrorContains(t, err, denied, "truncate")
	assert.ErrorContains(t, sc.Remove("/C:/k/kubelet.exe"), denied, "delete")
	assert.ErrorContains(t, sc.Rename("/C:/k", "/C:/k-old"), denied, "move the directory it runs from")
	c := th.dial(t)
	r := run(t, c, `Move-Item -Force -Path C:\k\kubelet.exe.new -Destination C:\k\kubelet.exe`)
	assert.Contains(t, r.stderr, `Access to the path 'C:\k\kubelet.exe' is denied.`)
	got, err := th.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.Equal(t, old, got, "nothing replaced the running binary")

	require.NoError(t, sc.Rename("/C:/k/kubelet.exe", "/C:/k/kubelet.exe.old"), "renaming it away is allowed")
	assert.ErrorContains(t, sc.Remove("/C:/k/kubelet.exe.old"), denied, "still running under its new name")
	require.NoError(t, sc.Rename("/C:/k/kubelet.exe.old", "/C:/k/kubelet.exe"))

	th.StopService("kubelet")
	require.NoError(t, sc.PosixRename("/C:/k/kubelet.exe.new", "/C:/k/kubelet.exe"), "a stopped service's binary can be replaced")
	got, err = th.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.Equal(t, "new kubelet", string(got))
}
