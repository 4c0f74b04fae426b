package local

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServe is a stand-in service: it forks a child (as gunicorn forks
// workers) and answers /health. Process management is what is tested here;
// tests/e2e runs the real services.
const fakeServe = `#!/usr/bin/env bash
set -euo pipefail
sleep 300 &
exec python3 -c '
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = os.environ.get("SERVICE_VERSION", "-").encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer((os.environ["LISTEN_ADDRESS"], int(os.environ["PORT"])), H).serve_forever()
'
`

func fakeRepo(t *testing.T, serve map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, svc := range Services {
		dir := filepath.Join(root, "apps", svc)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		script := fakeServe
		if s, ok := serve[svc]; ok {
			script = s
		}
		if err := os.WriteFile(filepath.Join(dir, "serve"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("BOOKINFO_ROOT", root)
	t.Setenv("BOOKLOAD_STATE_DIR", filepath.Join(root, "state"))
	return root
}

var portMu sync.Mutex
var nextBase = 20000 + os.Getpid()%5000*4

// freeBase returns a port base whose four ports are free now.
func freeBase(t *testing.T) int {
	t.Helper()
	portMu.Lock()
	defer portMu.Unlock()
	for ; nextBase < 60000; nextBase += 4 {
		ok := true
		for i := 0; i < 4 && ok; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", nextBase+i))
			if err != nil {
				ok = false
			} else {
				l.Close()
			}
		}
		if ok {
			b := nextBase
			nextBase += 4
			return b
		}
	}
	t.Fatal("no free port base")
	return 0
}

func quickOpts(out *bytes.Buffer) Options {
	return Options{Detach: true, Timeout: 20 * time.Second, Grace: 3 * time.Second, Out: out}
}

func TestUpStatusDownDetached(t *testing.T) {
	fakeRepo(t, nil)
	base := freeBase(t)
	var out bytes.Buffer
	if err := Up(context.Background(), Config{PortBase: base}, quickOpts(&out)); err != nil {
		t.Fatalf("up: %v\n%s", err, out.String())
	}
	stacks, err := Status(&out)
	if err != nil || len(stacks) != 1 {
		t.Fatalf("status: %v %+v", err, stacks)
	}
	var pgids []int
	for _, s := range stacks[0].Services {
		if !s.Running || !s.Healthy {
			t.Errorf("%s not running and healthy: %+v", s.Name, s)
		}
		pgids = append(pgids, s.PID)
	}
	if len(pgids) != 4 {
		t.Fatalf("want 4 services, got %d", len(pgids))
	}
	for _, pg := range pgids {
		if !groupAlive(pg) {
			t.Fatalf("process group %d not alive", pg)
		}
	}
	if err := Down(base, false, 3*time.Second, &out); err != nil {
		t.Fatalf("down: %v", err)
	}
	for _, pg := range pgids {
		if groupAlive(pg) {
			t.Errorf("process group %d (with its forked child) still alive after down", pg)
		}
	}
	if stacks, _ := Status(&out); len(stacks) != 0 {
		t.Errorf("status after down: %+v", stacks)
	}
}

func TestUpRefusesBusyPortNamingIt(t *testing.T) {
	fakeRepo(t, nil)
	base := freeBase(t)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+2))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out bytes.Buffer
	err = Up(context.Background(), Config{PortBase: base}, quickOpts(&out))
	if err == nil {
		Down(base, false, time.Second, &out)
		t.Fatal("up succeeded on a busy port")
	}
	want := fmt.Sprintf("reviews: port %d is already in use by pid %d", base+2, os.Getpid())
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}

func TestUpNamesServiceThatDoesNotStart(t *testing.T) {
	fakeRepo(t, map[string]string{
		"reviews": "#!/usr/bin/env bash\necho 'reviews: target/reviews.jar missing; run make setup' >&2\nexit 1\n",
	})
	base := freeBase(t)
	var out bytes.Buffer
	err := Up(context.Background(), Config{PortBase: base}, quickOpts(&out))
	if err == nil {
		t.Fatal("up succeeded with a broken service")
	}
	for _, want := range []string{"reviews exited during start", "run make setup"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	// The services that did start were stopped again, forked children too.
	if stacks, _ := Status(&out); len(stacks) != 0 {
		t.Errorf("a failed up left a stack behind: %+v", stacks)
	}
	pids := regexp.MustCompile(`started \w+ +pid (\d+)`).FindAllStringSubmatch(out.String(), -1)
	if len(pids) == 0 {
		t.Fatalf("no started service in %q", out.String())
	}
	for _, m := range pids {
		pid, _ := strconv.Atoi(m[1])
		if groupAlive(pid) {
			t.Errorf("process group %d survived a failed up", pid)
		}
	}
}

func TestUpTimeoutNamesUnhealthyService(t *testing.T) {
	fakeRepo(t, map[string]string{"ratings": "#!/usr/bin/env bash\necho still warming up\nexec sleep 300\n"})
	base := freeBase(t)
	var out bytes.Buffer
	opts := quickOpts(&out)
	opts.Timeout = 2 * time.Second
	err := Up(context.Background(), Config{PortBase: base}, opts)
	if err == nil {
		t.Fatal("up succeeded with a service that never answers")
	}
	for _, want := range []string{fmt.Sprintf("ratings did not answer http://127.0.0.1:%d/health", base+3), "still warming up"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestStaleStateIsCleaned(t *testing.T) {
	root := fakeRepo(t, nil)
	base := freeBase(t)
	state := filepath.Join(root, "state")
	os.MkdirAll(stackDir(state, base), 0o755)
	// A pid that surely does not run with this start time.
	stale := &StackState{PortBase: base, Services: []ServiceState{{Name: "details", PID: os.Getpid(), StartTime: 1}}}
	if err := stale.save(state); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Up(context.Background(), Config{PortBase: base}, quickOpts(&out)); err != nil {
		t.Fatalf("up over stale state: %v", err)
	}
	defer Down(base, false, 3*time.Second, &out)
	if !strings.Contains(out.String(), "cleaned stale state") {
		t.Errorf("no stale-state message in %q", out.String())
	}
	// A second stack on the same base is refused while the first runs.
	err := Up(context.Background(), Config{PortBase: base}, quickOpts(&out))
	if err == nil || !strings.Contains(err.Error(), "a stack already runs on port base") {
		t.Errorf("second up on a live base: %v", err)
	}
}

func TestForegroundStopsEverythingOnCancel(t *testing.T) {
	fakeRepo(t, nil)
	base := freeBase(t)
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{Timeout: 20 * time.Second, Grace: 3 * time.Second, Out: &out}
	errc := make(chan error, 1)
	go func() { errc <- Up(ctx, Config{PortBase: base}, opts) }()
	var pgids []int
	deadline := time.Now().Add(20 * time.Second)
	for len(pgids) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		var discard bytes.Buffer
		if !strings.Contains(out.String(), "ready:") {
			continue
		}
		if stacks, _ := Status(&discard); len(stacks) == 1 && !stacks[0].Detached {
			healthy := 0
			for _, s := range stacks[0].Services {
				if s.Healthy {
					healthy++
				}
			}
			if healthy == 4 {
				for _, s := range stacks[0].Services {
					pgids = append(pgids, s.PID)
				}
			}
		}
	}
	if len(pgids) != 4 {
		cancel()
		t.Fatalf("foreground stack never became healthy: %s", out.String())
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("foreground up: %v", err)
	}
	for _, pg := range pgids {
		if groupAlive(pg) {
			t.Errorf("process group %d survived the foreground stack", pg)
		}
	}
}

func TestEnvWiringAndProfiles(t *testing.T) {
	cfg := Config{PortBase: 9180, Profile: "legacy", Reviews: "v3"}
	if err := cfg.ParseSet("ratings.SERVICE_VERSION=v-faulty"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ svc, key, want string }{
		{"productpage", "PORT", "9180"},
		{"productpage", "DETAILS_SERVICE_PORT", "9181"},
		{"productpage", "REVIEWS_SERVICE_PORT", "9182"},
		{"productpage", "RATINGS_SERVICE_PORT", "9183"},
		{"productpage", "HTTP_KEEPALIVE", "false"},
		{"productpage", "UPSTREAM_KEEPALIVE", "false"},
		{"details", "HTTP_NODELAY", "false"},
		{"details", "LISTEN_ADDRESS", "127.0.0.1"},
		{"reviews", "RATINGS_SERVICE_PORT", "9183"},
		{"reviews", "STAR_COLOR", "red"},
		{"reviews", "ENABLE_RATINGS", "true"},
		{"ratings", "SERVICE_VERSION", "v-faulty"},
	}
	for _, tt := range tests {
		if got := cfg.Env(tt.svc)[tt.key]; got != tt.want {
			t.Errorf("%s %s = %q, want %q", tt.svc, tt.key, got, tt.want)
		}
	}
	tuned := Config{}
	tuned.Validate()
	if _, set := tuned.Env("details")["HTTP_NODELAY"]; set {
		t.Error("tuned profile sets HTTP_NODELAY; it must leave the default")
	}
	env := mergeEnv([]string{"SERVICES_DOMAIN=svc.cluster.local", "PORT=1", "PATH=/bin"}, map[string]string{"PORT": "9081"})
	if strings.Join(env, " ") != "PATH=/bin PORT=9081" {
		t.Errorf("mergeEnv = %v", env)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		set  string
		want string
	}{
		{cfg: Config{Profile: "fast"}, want: `unknown profile "fast"`},
		{cfg: Config{Reviews: "v4"}, want: `unknown reviews version "v4"`},
		{cfg: Config{PortBase: 80}, want: "port base 80 out of range"},
		{cfg: Config{Without: []string{"mongodb"}}, want: `unknown service "mongodb"`},
		{set: "details=1", want: "want service.NAME=value"},
		{set: "nosuch.X=1", want: `unknown service "nosuch"`},
	}
	for _, tt := range tests {
		var err error
		if tt.set != "" {
			err = tt.cfg.ParseSet(tt.set)
		} else {
			err = tt.cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v %q: error %v, want %q", tt.cfg, tt.set, err, tt.want)
		}
	}
}

// lockedBuffer is written by Up's goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
