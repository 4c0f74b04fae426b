// Package e2e starts real Bookinfo stacks with `bookload local` and checks
// the contract over real HTTP on loopback.
package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	flog "fortio.org/log"
)

var (
	bookload string // the binary under test
	repoRoot string
)

// stack is one `bookload local up --detach` with its own port base.
type stack struct {
	name string
	args []string
	base int
	err  error
	log  string
	once sync.Once
}

// The stacks the suite uses, started together in TestMain because the
// services (Spring Boot above all) take seconds to start.
var (
	stackV2 = &stack{name: "tuned-v2", args: []string{"--reviews", "v2"}}
	stackV1 = &stack{name: "tuned-v1", args: []string{"--reviews", "v1"}}
	stackV3 = &stack{name: "tuned-v3", args: []string{"--reviews", "v3"}}
	// Tests that stop services get stacks of their own, so that no other
	// test depends on running before or after them.
	stackDrain   = &stack{name: "drain", args: []string{"--reviews", "v1"}}
	stackDegrade = &stack{name: "degradation", args: []string{"--reviews", "v3"}}
	stackLegacy  = &stack{name: "legacy-v2", args: []string{"--profile", "legacy"}}
	stackLogin   = &stack{name: "login, ratings stand-in", args: []string{"--without", "ratings"}}
	stackClose   = &stack{name: "keep-alive off", args: []string{
		"--set", "productpage.HTTP_KEEPALIVE=false", "--set", "details.HTTP_KEEPALIVE=false",
		"--set", "reviews.HTTP_KEEPALIVE=false", "--set", "ratings.HTTP_KEEPALIVE=false"}}
	// The hostile-input suite (hostile_*_test.go) gets a stack of its own:
	// its floods and desync attempts must not leave a mark on the stacks the
	// contract tests read, and its slow-head checks want a short deadline
	// and a connection limit they can exceed.
	stackHostile = &stack{name: "hostile", args: hostileArgs()}
	// Many clients at once against the default connection limits: a stack
	// of its own, so that its memory readings start from a quiet service.
	stackCrowd    = &stack{name: "crowd", args: []string{"--reviews", "v2"}}
	stackNoTiming = &stack{name: "server timing off", args: []string{
		"--set", "productpage.SERVER_TIMING=false", "--set", "details.SERVER_TIMING=false",
		"--set", "reviews.SERVER_TIMING=false", "--set", "ratings.SERVER_TIMING=false"}}
	// The waterfall test's stack: reviews reaches ratings through a proxy
	// in the test process that can answer late (waterfall_test.go), on a
	// port held from the start (waterfallProxy) so that nothing else takes it.
	stackWaterfall = &stack{name: "waterfall, ratings behind a proxy"}
	allStacks      = []*stack{stackV2, stackV1, stackV3, stackDrain, stackDegrade, stackLegacy, stackLogin, stackClose, stackHostile, stackNoTiming, stackWaterfall, stackCrowd}
	waterfallProxy net.Listener
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// fortio logs every closed socket at info level; the tests report what matters.
	flog.SetLogLevelQuiet(flog.Warning)
	if servicesErr != nil {
		fmt.Fprintln(os.Stderr, servicesErr)
		return 2
	}
	wd, _ := os.Getwd()
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	tmp, err := os.MkdirTemp("", "bookinfo-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	bookload = filepath.Join(tmp, "bookload")
	build := exec.Command("go", "build", "-o", bookload, "./load/cmd/bookload")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building bookload: %v\n%s", err, out)
		return 1
	}
	// Own state directory: the suite never touches a user's stacks.
	os.Setenv("BOOKINFO_ROOT", repoRoot)
	os.Setenv("BOOKLOAD_STATE_DIR", filepath.Join(tmp, "state"))
	defer func() {
		out, _ := exec.Command(bookload, "local", "down", "--all", "--grace", "5s").CombinedOutput()
		fmt.Fprintf(os.Stderr, "e2e cleanup: %s", out)
	}()

	// Below Linux's ephemeral range (32768+), where outgoing connections
	// could take a port a service is about to listen on; one after another,
	// so that no two stacks overlap.
	next := 20000 + (os.Getpid()%100)*100
	for _, s := range allStacks {
		s.base = freeBase(next)
		next = s.base + 4
	}
	if waterfallProxy, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", freeBase(next))); err != nil {
		fmt.Fprintln(os.Stderr, "the waterfall test's proxy port:", err)
		return 1
	}
	defer waterfallProxy.Close()
	stackWaterfall.args = []string{"--reviews", "v2", "--set", fmt.Sprintf("reviews.RATINGS_SERVICE_PORT=%d", waterfallProxy.Addr().(*net.TCPAddr).Port)}
	// The whole suite starts every stack at once; a run narrowed with -run
	// starts only the stacks its tests need, when they first ask (need).
	flag.Parse()
	if flag.Lookup("test.run").Value.String() == "" {
		var wg sync.WaitGroup
		for _, s := range allStacks {
			wg.Add(1)
			go func(s *stack) {
				defer wg.Done()
				s.once.Do(s.up)
			}(s)
		}
		wg.Wait()
	}
	code := m.Run()
	if code != 0 {
		keepLogs(filepath.Join(tmp, "state"), filepath.Join(repoRoot, "test-results", "e2e-logs"))
	}
	return code
}

// keepLogs copies every service log of a failed run where the test runner
// keeps its logs (test-results/), before the state directory is removed.
func keepLogs(state, dest string) {
	logs, _ := filepath.Glob(filepath.Join(state, "stack-*", "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		name := filepath.Base(filepath.Dir(l)) + "-" + filepath.Base(l)
		if err := os.MkdirAll(dest, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(dest, name), b, 0o644)
		}
	}
	if len(logs) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: service logs kept in %s\n", dest)
	}
}

// freeBase returns a port base at or after from whose four ports are free.
func freeBase(from int) int {
	for base := from; base < 32760; base += 4 {
		free := true
		for i := 0; i < 4 && free; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				free = false
			} else {
				l.Close()
			}
		}
		if free {
			return base
		}
	}
	panic("no free port base")
}

// up runs `bookload local up --detach` for the stack; call it through once.
func (s *stack) up() {
	args := append([]string{"local", "up", "--detach", "--port-base", fmt.Sprint(s.base), "--timeout", "180s"}, s.args...)
	out, err := exec.Command(bookload, args...).CombinedOutput()
	s.log = string(out)
	if err != nil {
		s.err = fmt.Errorf("bookload %s: %w\n%s", strings.Join(args, " "), err, out)
	}
}

// need starts the stack if it is not up yet, and fails the test when it
// did not start.
func (s *stack) need(t *testing.T) *stack {
	t.Helper()
	s.once.Do(s.up)
	if s.err != nil {
		t.Fatalf("stack %s did not start: %v", s.name, s.err)
	}
	return s
}

func (s *stack) port(svc string) int {
	off := map[string]int{"productpage": 0, "details": 1, "reviews": 2, "ratings": 3}[svc]
	return s.base + off
}

func (s *stack) url(svc, path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", s.port(svc), path)
}

// pid returns the pid of svc from `bookload local status --json`.
func (s *stack) pid(t *testing.T, svc string) int {
	t.Helper()
	out, err := exec.Command(bookload, "local", "status", "--json").Output()
	if err != nil {
		t.Fatalf("bookload local status: %v", err)
	}
	var stacks []struct {
		PortBase int `json:"port_base"`
		Services []struct {
			Name    string `json:"name"`
			PID     int    `json:"pid"`
			Running bool   `json:"running"`
		} `json:"services"`
	}
	if err := json.Unmarshal(out, &stacks); err != nil {
		t.Fatalf("status JSON: %v\n%s", err, out)
	}
	for _, st := range stacks {
		if st.PortBase != s.base {
			continue
		}
		for _, sv := range st.Services {
			if sv.Name == svc && sv.Running {
				return sv.PID
			}
		}
	}
	t.Fatalf("%s of stack %s is not running", svc, s.name)
	return 0
}

// stop sends SIGTERM to svc's process group and waits until it is gone,
// returning how long that took.
func (s *stack) stop(t *testing.T, svc string, within time.Duration) time.Duration {
	t.Helper()
	pid := s.pid(t, svc)
	start := time.Now()
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM %s: %v", svc, err)
	}
	for time.Since(start) < within {
		if syscall.Kill(-pid, 0) != nil || isZombie(pid) {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s (pid %d) still running %v after SIGTERM", svc, pid, within)
	return 0
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && strings.HasPrefix(string(b[i+1:]), " Z")
}

var client = &http.Client{
	Timeout: 10 * time.Second,
	// Docs scripts use curl without -L: redirects are checked, not followed.
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// get fetches url and returns status and body.
func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp.StatusCode, string(b)
}
