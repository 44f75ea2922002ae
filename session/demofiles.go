package session

import (
	"fmt"
	"os"
	"sync"
)

// The demo's files (its audit log, its pinned host keys, its payload) go in a directory of its own made by
// os.MkdirTemp: 0700, with a name nobody can guess, so nothing is opened through a symlink someone planted at
// a predictable name in the shared temporary directory, and nothing of a demo run reaches the user's files.

// demoDirs are the private directories of this process's open demo sessions, for RemoveDemoFiles.
var demoDirs sync.Map

// newDemoDir makes a demo session's private directory.
func newDemoDir() (string, error) {
	dir, err := os.MkdirTemp("", "wmcon-demo-")
	if err != nil {
		return "", fmt.Errorf("the demo's private directory: %w (set TMPDIR to a writable directory)", err)
	}
	demoDirs.Store(dir, struct{}{})
	return dir, nil
}

func removeDemoDir(dir string) {
	_ = os.RemoveAll(dir)
	demoDirs.Delete(dir)
}

// RemoveDemoFiles removes the private directory of every demo session still open: for a process that a
// signal ends at once, without the Close that would have.
func RemoveDemoFiles() {
	demoDirs.Range(func(dir, _ any) bool {
		removeDemoDir(dir.(string))
		return true
	})
}
