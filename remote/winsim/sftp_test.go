package winsim

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
