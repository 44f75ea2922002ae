package kubeapi

import "syscall"

// sysProcAttr puts the server in its own process group (so stop reaches anything it forks) and asks the
// kernel to kill it when the test binary dies. That covers what t.Cleanup cannot: a panic in another
// goroutine, a `go test -timeout` abort or a SIGKILL of the test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
