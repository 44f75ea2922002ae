package localfile

import (
	"errors"
	"io"
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

// A file that grows after it was opened is still read no further than the cap.
func TestOpenedFileStopsAtTheCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("12345"), 0o600))
	f, err := Open(p, 8)
	require.NoError(t, err)
	defer f.Close()
	assert.EqualValues(t, 5, f.Size)
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = w.Write([]byte("6789abcdef"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	data, err := io.ReadAll(f)
	var big *TooLargeError
	require.ErrorAs(t, err, &big)
	assert.LessOrEqual(t, len(data), 9, "never more than the cap and the byte that shows it was passed")
	assert.ErrorContains(t, err, p+" is larger than wmcon reads for it (9 bytes, at most 8 bytes)")

	_, err = f.Seek(0, io.SeekStart) // an upload that starts again reads from the beginning, within the cap
	require.NoError(t, err)
	head := make([]byte, 4)
	_, err = io.ReadFull(f, head)
	require.NoError(t, err)
	assert.Equal(t, "1234", string(head))
}

func TestSizesAreWrittenForPeople(t *testing.T) {
	for n, want := range map[int64]string{523: "523 bytes", 1 << 20: "1 MiB", 16 << 20: "16 MiB", 1536: "1.5 KiB", 2 << 30: "2 GiB"} {
		assert.Equal(t, want, bytesText(n))
	}
}
