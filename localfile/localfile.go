// Package localfile reads the files a user names (kubeconfigs, SSH keys, ssh_config, known_hosts, mirror
// manifests, pull secrets, payload files) with a size cap, refusing anything that is not a regular file: a
// device such as /dev/zero would otherwise be read until memory runs out, and a FIFO would block the process
// in open(2) or read(2) where no signal handler helps. Every read of a file named on the command line or in
// a setting goes through Open or Read.
package localfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Caps for the files wmcon reads. Real files are far smaller; the caps only stop runaway reads.
const (
	MaxKubeconfig = 16 << 20 // kubeconfigs with many embedded certificates stay well below this
	MaxKey        = 1 << 20  // an SSH private key is a few KiB
	MaxSSHConfig  = 4 << 20
	MaxKnownHosts = 64 << 20
	MaxManifest   = 16 << 20 // a YAML or JSON file of objects (mirror sets): the API server takes 3 MiB per object
	MaxPullSecret = 1 << 20  // a Secret cannot be larger
	MaxSums       = 1 << 20  // a payload's sha256sum: one line per file
	MaxPayload    = 2 << 30  // one payload file (kubelet.exe, containerd.exe, ...): about 100 MiB today
)

// TooLargeError is a file above its cap.
type TooLargeError struct {
	Path string
	Size int64 // what was found: the file's size, or how much was read before stopping
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than wmcon reads for it (%s, at most %s): this is not the file expected; check the path",
		e.Path, bytesText(e.Size), bytesText(e.Max))
}

// bytesText is n in the largest binary unit that keeps it whole or above 1, as "16 MiB" or "523 bytes".
func bytesText(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift {
			if n%(1<<u.shift) == 0 {
				return fmt.Sprintf("%d %s", n>>u.shift, u.name)
			}
			return fmt.Sprintf("%.1f %s", float64(n)/float64(int64(1)<<u.shift), u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// NotRegularError is a path naming a device, FIFO, socket or directory.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s): give the path of a file", e.Path, kind(e.Mode))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// Check stats path (following symlinks) without opening it: it must be a regular file of at most max
// bytes. A missing file is returned as the os error (errors.Is(err, fs.ErrNotExist)).
func Check(path string, max int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return checkInfo(path, fi, max)
}

func checkInfo(path string, fi fs.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > max {
		return &TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	return nil
}

// File is a regular file opened by Open: reading it yields at most its cap, then a TooLargeError (a file
// that grows while it is read is stopped there too).
type File struct {
	f    *os.File
	path string
	max  int64
	read int64
	Size int64 // the size when it was opened
}

// Open opens a regular file of at most max bytes for reading. It checks before opening, opens without
// waiting (a FIFO put in its place in between would block open(2)), and checks the opened file again.
func Open(path string, max int64) (*File, error) {
	if err := Check(path, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkInfo(path, fi, max)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, path: path, max: max, Size: fi.Size()}, nil
}

// Read reads at most the cap, and fails once the file holds more.
func (b *File) Read(p []byte) (int, error) {
	if room := b.max + 1 - b.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.f.Read(p)
	b.read += int64(n)
	if b.read > b.max {
		return n, &TooLargeError{Path: b.path, Size: b.read, Max: b.max}
	}
	return n, err
}

// Seek moves in the file (an upload that resumes); the cap counts from the new offset's start.
func (b *File) Seek(offset int64, whence int) (int64, error) {
	at, err := b.f.Seek(offset, whence)
	if err == nil {
		b.read = at
	}
	return at, err
}

// Close closes the file.
func (b *File) Close() error { return b.f.Close() }

// Read reads a regular file of at most max bytes (Open, then all of it).
func Read(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// IsRefused tells whether err is a refusal of this package (as opposed to an I/O error).
func IsRefused(err error) bool {
	var big *TooLargeError
	var odd *NotRegularError
	return errors.As(err, &big) || errors.As(err, &odd)
}
