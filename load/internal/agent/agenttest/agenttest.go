// Package agenttest runs the real `bookload agent` on loopback for tests.
//
// The agent serves fortio's UI with ui.Serve, which needs the fortio module's
// version from the binary's build information: a `go test` binary has none
// (ui.Serve would register a malformed route and panic), and ui.Serve keeps
// its state in package globals. So tests build the bookload command once
// and start one agent process per test.
package agenttest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	once   sync.Once
	binDir string
	bin    string
	binErr error
)

// Binary builds the bookload command (once per test process) and returns
// its path.
func Binary(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "bookload-agenttest-"); binErr != nil {
			return
		}
		bin = filepath.Join(binDir, "bookload")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/bookinfo-bench/bookinfo-bench/load/cmd/bookload").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build bookload: %w\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return bin
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// Agent is a running `bookload agent`.
type Agent struct {
	// URL is its base URL: http://127.0.0.1:PORT.
	URL string
	// Log returns what the agent wrote to stderr so far.
	Log func() string
}

// Start runs `bookload agent --listen 127.0.0.1:0 --data-dir <temp> ARGS...`
// until the test ends (SIGTERM, then SIGKILL after 5 s).
func Start(t testing.TB, args ...string) *Agent {
	t.Helper()
	dataDir := t.TempDir()
	cmd := exec.Command(Binary(t), append([]string{"agent", "--listen", "127.0.0.1:0", "--data-dir", dataDir}, args...)...)
	var mu sync.Mutex
	var logBuf strings.Builder
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logBuf.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
		close(addr)
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	a := &Agent{Log: func() string { mu.Lock(); defer mu.Unlock(); return logBuf.String() }}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case u, ok := <-addr:
		if !ok {
			<-exited
			t.Fatalf("bookload agent exited before listening:\n%s", a.Log())
		}
		a.URL = u
	case <-time.After(20 * time.Second):
		t.Fatalf("bookload agent not listening after 20 s:\n%s", a.Log())
	}
	return a
}
