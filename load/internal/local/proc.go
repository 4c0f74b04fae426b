package local

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// procStartTime returns the start time of pid in clock ticks since boot
// (field 22 of /proc/<pid>/stat). Together with the pid it identifies a
// process across pid reuse, which is how a stale pid file is told apart.
func procStartTime(pid int) (uint64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	if st.State == "Z" {
		return 0, errors.New("zombie")
	}
	return st.Starttime, nil
}

// alive reports whether pid is still the process that was started at
// startTime.
func alive(pid int, startTime uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := procStartTime(pid)
	return err == nil && st == startTime
}

// groupAlive reports whether a live (non-zombie) process is left in
// process group pgid. It reads /proc rather than probing with kill(0):
// zombies answer kill, and where no init reaps them they would look alive
// forever.
func groupAlive(pgid int) bool {
	procs, err := procfs.AllProcs()
	if err != nil {
		return false
	}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil && st.State != "Z" && st.PGRP == pgid {
			return true
		}
	}
	return false
}

// stopGroup sends SIGTERM to the process group, waits up to grace for all of
// it to exit, then sends SIGKILL. isGone tells whether the group is gone; it
// is a parameter so that a parent that must reap its children can do so.
func stopGroup(pgid int, grace time.Duration, isGone func() bool) (killed bool) {
	if isGone() {
		return false
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if isGone() {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for i := 0; i < 100 && !isGone(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
