// Package localfile reads the user's own small files (kubeconfigs, SSH keys, ssh_config, known_hosts) with
// a size cap, refusing anything that is not a regular file: a device such as /dev/zero would otherwise be
// read until memory runs out, and a FIFO would block the process in open(2) where no signal handler helps.
package localfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Caps for the files wmcon reads. Real files are far smaller; the caps only stop runaway reads.
const (
	MaxKubeconfig = 16 << 20 // kubeconfigs with many embedded certificates stay well below this
	MaxKey        = 1 << 20  // an SSH private key is a few KiB
	MaxSSHConfig  = 4 << 20
	MaxKnownHosts = 64 << 20
)

// TooLargeError is a file above its cap.
type TooLargeError struct {
	Path string
	Size int64
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes (%d): this is not the file wmcon expects; check the path", e.Path, e.Max, e.Size)
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

// Read reads a regular file of at most max bytes. It checks before opening (opening a FIFO blocks), checks
// the opened file again (the path may have changed in between) and never reads more than max bytes.
func Read(path string, max int64) ([]byte, error) {
	if err := Check(path, max); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkInfo(path, fi, max); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: path, Size: int64(len(data)), Max: max}
	}
	return data, nil
}

// IsRefused tells whether err is a refusal of this package (as opposed to an I/O error).
func IsRefused(err error) bool {
	var big *TooLargeError
	var odd *NotRegularError
	return errors.As(err, &big) || errors.As(err, &odd)
}
