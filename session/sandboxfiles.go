package session

import (
	"os"
	"sync"
)

// A backend that keeps its own files (the demo: its audit log, pinned host keys and payload) keeps them in a
// private directory (backend.Sandbox.Dir, made by os.MkdirTemp: 0700, a name nobody can guess), which its
// Close removes. A process that a signal ends at once never reaches Close, so the session remembers every
// open sandbox directory for RemoveSandboxFiles.

// sandboxDirs are the private directories of this process's open sessions' backends.
var sandboxDirs sync.Map

func rememberSandbox(dir string) {
	if dir != "" {
		sandboxDirs.Store(dir, struct{}{})
	}
}

func forgetSandbox(dir string) {
	if dir != "" {
		sandboxDirs.Delete(dir)
	}
}

// RemoveSandboxFiles removes the private directory of every backend still open: for a process that a signal
// ends at once, without the Close that would have.
func RemoveSandboxFiles() {
	sandboxDirs.Range(func(dir, _ any) bool {
		_ = os.RemoveAll(dir.(string))
		sandboxDirs.Delete(dir)
		return true
	})
}
