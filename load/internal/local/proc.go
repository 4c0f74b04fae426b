package local

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procStartTime returns the start time of pid in clock ticks since boot
// (field 22 of /proc/<pid>/stat). Together with the pid it identifies a
// process across pid reuse, which is how a stale pid file is told apart.
func procStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces; it ends at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(b[i+1:]))
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, errors.New("short /proc stat")
	}
	if fields[0] == "Z" {
		return 0, errors.New("zombie")
	}
	return strconv.ParseUint(fields[19], 10, 64)
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
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		// After the command: state (field 3), ppid (4), pgrp (5).
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) >= 3 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
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
