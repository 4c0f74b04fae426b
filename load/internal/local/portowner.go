package local

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// checkPortFree fails with a message naming the port, and the process that
// holds it when /proc tells, if 127.0.0.1:port cannot be bound.
func checkPortFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err == nil {
		return l.Close()
	}
	if owner := portOwner(port); owner != "" {
		return fmt.Errorf("port %d is already in use by %s", port, owner)
	}
	return fmt.Errorf("port %d is already in use (%w)", port, err)
}

// portOwner finds the process listening on port through /proc/net/tcp{,6}
// and the socket inodes in /proc/<pid>/fd. Best effort: "" when unknown.
func portOwner(port int) string {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// local_address is "IP:PORT" in hex; state 0A is LISTEN.
			if len(fields) < 10 || fields[3] != "0A" {
				continue
			}
			colon := strings.LastIndexByte(fields[1], ':')
			p, err := strconv.ParseUint(fields[1][colon+1:], 16, 32)
			if err == nil && int(p) == port {
				inodes[fields[9]] = true
			}
		}
		file.Close()
	}
	if len(inodes) == 0 {
		return ""
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		link, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			pid := strings.Split(fd, "/")[2]
			cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			return fmt.Sprintf("pid %s (%s)", pid, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
		}
	}
	return ""
}
