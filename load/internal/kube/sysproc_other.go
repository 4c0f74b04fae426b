//go:build !linux

package kube

import "syscall"

// sysProcAttr: see sysproc_linux.go; elsewhere no death signal.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
