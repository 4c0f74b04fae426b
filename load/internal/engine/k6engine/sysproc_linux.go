package k6engine

import "syscall"

// sysProcAttr puts k6 in its own process group (a terminal's Ctrl-C reaches
// bookload, which stops k6 gracefully) and kills it if bookload dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
