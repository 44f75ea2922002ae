//go:build !linux

package kubeapi

import "syscall"

// sysProcAttr puts the server in its own process group. Only Linux can also tie its life to the test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
