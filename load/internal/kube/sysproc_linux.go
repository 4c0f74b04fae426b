package kube

import "syscall"

// sysProcAttr puts kubectl proxy in its own process group (a terminal's
// Ctrl-C reaches bookload only, which still needs the proxy to stop the
// clients' runs and take the last cost sample) and ends it if bookload dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
