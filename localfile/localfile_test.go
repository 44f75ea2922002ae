package localfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadRegularFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("hello"), 0o600))
	data, err := Read(p, 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(data))

	_, err = Read(p, 4)
	var big *TooLargeError
	require.ErrorAs(t, err, &big)
	assert.ErrorContains(t, err, p)
	assert.True(t, IsRefused(err))

	_, err = Read(filepath.Join(t.TempDir(), "missing"), 5)
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	assert.False(t, IsRefused(err))
}

func TestDevicesAndDirectoriesAreRefused(t *testing.T) {
	for path, what := range map[string]string{"/dev/zero": "character device", t.TempDir(): "directory"} {
		_, err := Read(path, MaxKey)
		var odd *NotRegularError
		require.ErrorAs(t, err, &odd, path)
		assert.ErrorContains(t, err, what)
	}
}

// A FIFO nobody writes to would block open(2) forever: it must be refused without opening it.
func TestFIFOIsRefusedWithoutBlocking(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	done := make(chan error, 1)
	go func() { _, err := Read(p, MaxKey); done <- err }()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "named pipe")
	case <-time.After(5 * time.Second):
		// Unblock the reader so the test ends, then fail.
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("reading a FIFO blocked")
	}
}
