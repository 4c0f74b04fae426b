//go:build !linux

package k6engine

import "syscall"

// sysProcAttr: see sysproc_linux.go; elsewhere no death signal.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
