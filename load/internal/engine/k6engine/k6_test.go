package k6engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// needK6 returns the k6 binary, or skips the test when it is not built.
// Under CI=true a missing k6 fails instead: `make setup` builds it there.
func needK6(t *testing.T) string {
	t.Helper()
	bin, err := Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("SKIP: the real k6 is not built (%v)", err)
	}
	return bin
}

func request(url string, qps float64, conns int, d time.Duration) engine.Request {
	return engine.Request{
		Scenario: &scenario.Scenario{
			Name: "test", Service: "details", Path: "/details/0", KeepAlive: true,
			Timeout: scenario.Duration(3 * time.Second), Repetitions: 1,
		},
		Profile:    scenario.Profile{Name: "p", QPS: qps, Connections: conns, Duration: scenario.Duration(d)},
		Target:     loadtarget.Target{Name: "t", URL: url},
		Repetition: 1,
	}
}

func runK6(t *testing.T, req engine.Request) *engine.Result {
	t.Helper()
	needK6(t)
	var out strings.Builder
	res, err := (&Engine{Stderr: &out}).Run(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("k6 run: %v\n%s", err, out.String())
	}
	if res.Interrupted {
		t.Fatal("interrupted")
	}
	return res
}

func summary(res *engine.Result) (plain, corr latency.Summary) {
	return latency.Summarize(res.Latency.Plain, res.Latency.PlainSum),
		latency.Summarize(res.Latency.Corrected, res.Latency.CorrectedSum)
}

// AgreementTolerance is how close the k6 engine's percentiles (and average)
// must come to the fortio engine's against a server of known latency
// (20-40 ms): 5% of the value or 1.5 ms, whichever is larger; and each
// engine's to the server's own measure of the same requests. Measured on the
// 2-core development machine: fortio adds 0.1-0.4 ms to what the server saw,
// k6 0.6-1.0 ms (a JavaScript VU per connection, Go's net/http client), so
// the engines differ by 0.2-1.1 ms (1-3%); the rest is room for other test
// packages running at the same time.
const (
	AgreementRel = 0.05
	AgreementAbs = 1.5 // ms
)

// withinSlack widens the absolute tolerance by slack ms.
func withinSlack(a, b, slack float64) bool {
	return math.Abs(a-b) <= math.Max(AgreementRel*math.Max(a, b), AgreementAbs+slack)
}

// nearestRank is the exact p-th percentile of xs (sorted), as HdrHistogram defines it.
func nearestRank(xs []time.Duration, p float64) float64 {
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return float64(xs[max(i, 0)]) / 1e6
}

// knownLatencyServer answers after a delay that follows a fixed permutation of
// 100 evenly spaced values between 20 and 40 ms, and records what it did.
type knownLatencyServer struct {
	*httptest.Server
	n      atomic.Int64
	mu     sync.Mutex
	served map[int64]time.Duration // by arrival number
	// late is the most any answer came later than its planned delay: a
	// measure of how starved the machine was.
	late time.Duration
}

func newKnownLatencyServer() *knownLatencyServer {
	s := &knownLatencyServer{served: map[int64]time.Duration{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		i := s.n.Add(1)
		plan := 20*time.Millisecond + time.Duration((i*37)%100)*200*time.Microsecond
		time.Sleep(plan)
		_, _ = w.Write([]byte(`{"id":0,"author":"William Shakespeare"}`))
		s.mu.Lock()
		s.served[i] = time.Since(start)
		s.late = max(s.late, s.served[i]-plan)
		s.mu.Unlock()
	}))
	return s
}

// take returns (sorted) what the server did since the last call, leaving out
// the first skip arrivals.
func (s *knownLatencyServer) take(skip int) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := int64(math.MaxInt64)
	for i := range s.served {
		first = min(first, i)
	}
	var out []time.Duration
	for i, d := range s.served {
		if i >= first+int64(skip) {
			out = append(out, d)
		}
	}
	clear(s.served)
	slices.Sort(out)
	return out
}

// takeLate returns how late the server's answers were at most since the last
// call, and resets it.
func (s *knownLatencyServer) takeLate() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.late
	s.late = 0
	return l
}

// TestAgreesWithFortio: the same known-latency server loaded by the fortio
// engine and by k6 at the same profile; avg and p50/p75/p90/p99 of both agree
// with each other, and with the server's own, within the stated tolerance.
//
// Timing on a shared machine is noisy: other test packages (and other
// people's services) run at the same time, and one starved moment of 20 ms
// moves the p99 of 120 requests (its 2nd largest) and the average. So the
// server measures how much later than planned its own answers came in each
// run (its sleep overshoot: the machine's stalls), and the tolerance of avg
// and p99 is widened by that; p50, p75 and p90 keep the stated tolerance.
// Corrected latency must be at least plain, and at p50-p90 within 5 ms of it
// (k6's own scheduling delay); at p99 it may legitimately show k6's stalls.
// An attempt that fails is repeated, up to 5 attempts (each about 3.5 s);
// every attempt is logged.
func TestAgreesWithFortio(t *testing.T) {
	needK6(t)
	var problems []string
	const attempts = 5
	for attempt := 1; attempt <= attempts; attempt++ {
		problems = agreement(t, attempt)
		if len(problems) == 0 {
			return
		}
		t.Logf("attempt %d:\n  %s", attempt, strings.Join(problems, "\n  "))
	}
	t.Errorf("k6 and fortio disagree in %d attempts; the last:\n  %s", attempts, strings.Join(problems, "\n  "))
}

// agreement runs fortio then k6 against a fresh known-latency server and
// returns what disagrees.
func agreement(t *testing.T, attempt int) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	srv := newKnownLatencyServer()
	defer srv.Close()
	req := request(srv.URL, 80, 8, 1500*time.Millisecond)

	fres, err := (&fortioengine.Engine{}).Run(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	fTruth := srv.take(req.Profile.Connections) // fortio's warmup: one request per connection first
	fLate := srv.takeLate()
	kres := runK6(t, req)
	kTruth := srv.take(0)
	kLate := srv.takeLate()
	t.Logf("attempt %d: the server's answers came at most %v (fortio run) and %v (k6 run) later than planned", attempt, fLate.Round(10*time.Microsecond), kLate.Round(10*time.Microsecond))
	fp, _ := summary(fres)
	kp, kc := summary(kres)
	t.Logf("attempt %d: fortio: %d requests, %.1f qps, avg %.2f p50 %.2f p90 %.2f p99 %.2f ms", attempt, fres.Requests, fres.ActualQPS, fp.Avg, fp.P50, fp.P90, fp.P99)
	t.Logf("attempt %d: k6:     %d requests, %.1f qps, avg %.2f p50 %.2f p90 %.2f p99 %.2f ms (corrected p99 %.2f); dropped %v; scheduling delay %v",
		attempt, kres.Requests, kres.ActualQPS, kp.Avg, kp.P50, kp.P90, kp.P99, kc.P99, kres.Metadata["dropped_iterations"], kres.Metadata["scheduling_delay_ms"])
	if kres.Requests < 110 || kres.Errors != 0 || kres.Metadata["dropped_iterations"] != int64(0) {
		fail("k6: %d requests, %d errors, %v dropped; want ~120, 0, 0", kres.Requests, kres.Errors, kres.Metadata["dropped_iterations"])
		return problems
	}
	if math.Abs(kres.ActualQPS-80) > 2 {
		fail("k6 achieved %.1f qps, want 80", kres.ActualQPS)
	}
	// The server saw every k6 request (k6 sends no warmup requests).
	if len(kTruth) != int(kres.Requests) {
		fail("server served %d requests during the k6 run, k6 reported %d", len(kTruth), kres.Requests)
	}
	if len(fTruth) != int(fres.Requests) {
		fail("server served %d requests during the fortio run (after its warmup), fortio reported %d", len(fTruth), fres.Requests)
	}
	stall := float64(max(fLate, kLate)) / 1e6 // ms
	for _, m := range []string{"avg", "p50", "p75", "p90", "p99"} {
		f, _ := fp.Metric(m)
		k, _ := kp.Metric(m)
		c, _ := kc.Metric(m)
		slack := 0.0
		if m == "avg" || m == "p99" {
			slack = stall
		}
		if !withinSlack(f, k, slack) {
			fail("%s: fortio %.3f ms, k6 %.3f ms (%+.1f%%): want within %.0f%% or %.1f ms (+ %.1f ms the machine stalled)", m, f, k, 100*(k-f)/f, 100*AgreementRel, AgreementAbs, slack)
		}
		// A server that keeps up: corrected adds only k6's own lateness.
		if c < k || (m != "p99" && c > k+5) {
			fail("%s: k6 plain %.3f ms, corrected %.3f ms: want plain + k6's own scheduling delay (< 5 ms)", m, k, c)
		}
		if m == "avg" {
			continue
		}
		p := map[string]float64{"p50": 50, "p75": 75, "p90": 90, "p99": 99}[m]
		ft := nearestRank(fTruth, p)
		kt := nearestRank(kTruth, p)
		t.Logf("attempt %d: %s: fortio %.3f (server %.3f, +%.3f), k6 %.3f (server %.3f, +%.3f) ms", attempt, m, f, ft, f-ft, k, kt, k-kt)
		if !withinSlack(kt, k, slack) || !withinSlack(ft, f, slack) {
			fail("%s vs the server's own: fortio %.3f (server %.3f), k6 %.3f (server %.3f) ms", m, f, ft, k, kt)
		}
	}
	return problems
}

// TestErrorsCounted: every 4th answer is a 503 and every 10th connection is
// cut without an answer; both are counted as errors, by code, as fortio does
// ("-1" = no HTTP answer).
func TestErrorsCounted(t *testing.T) {
	needK6(t)
	var n, n503, nCut atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case i%10 == 0:
			nCut.Add(1)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		case i%4 == 0:
			n503.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	req := request(srv.URL, 100, 4, time.Second)
	req.Scenario.KeepAlive = false // a cut connection must not cost later requests theirs
	res := runK6(t, req)
	t.Logf("requests %d errors %d codes %v (server: %d requests, %d 503, %d cut)", res.Requests, res.Errors, res.Codes, n.Load(), n503.Load(), nCut.Load())
	// Go's client retries an idempotent GET once when a fresh connection is
	// closed before any answer; either way each k6 request is one result.
	if res.Codes["503"] != n503.Load() {
		t.Errorf("503s: k6 %d, server %d", res.Codes["503"], n503.Load())
	}
	if res.Codes["-1"] == 0 || res.Codes["-1"] > nCut.Load() {
		t.Errorf("connection errors: k6 %d, server cut %d", res.Codes["-1"], nCut.Load())
	}
	if want := res.Codes["503"] + res.Codes["-1"]; res.Errors != want {
		t.Errorf("errors %d, want 503s + connection errors = %d", res.Errors, want)
	}
	if res.Codes["200"]+res.Errors != res.Requests {
		t.Errorf("codes %v do not add up to %d requests", res.Codes, res.Requests)
	}
}

// TestConnectionRefused: nothing listens; every request is an error "-1".
func TestConnectionRefused(t *testing.T) {
	needK6(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	res := runK6(t, request("http://"+addr, 20, 2, time.Second))
	if res.Requests < 15 || res.Errors != res.Requests || res.Codes["-1"] != res.Requests {
		t.Errorf("requests %d errors %d codes %v: want ~20, all connection errors", res.Requests, res.Errors, res.Codes)
	}
}

// TestDroppedIterations: a server that takes 250 ms cannot be offered 40 rps
// over 2 connections (at most 8/s): k6 drops the iterations it has no free
// connection for, and they are counted, not queued.
func TestDroppedIterations(t *testing.T) {
	needK6(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(250 * time.Millisecond)
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	res := runK6(t, request(srv.URL, 40, 2, time.Second))
	dropped := res.Metadata["dropped_iterations"].(int64)
	t.Logf("requests %d dropped %d ticks %v/%v qps %.1f", res.Requests, dropped, res.Metadata["ticks_seen"], res.Metadata["ticks_expected"], res.ActualQPS)
	if res.Requests < 6 || res.Requests > 12 {
		t.Errorf("requests %d, want ~8 (2 connections × 4/s)", res.Requests)
	}
	if dropped < 25 || res.Requests+dropped < 38 || res.Requests+dropped > 42 {
		t.Errorf("dropped %d + requests %d, want ~32 + ~8 = 40 ticks", dropped, res.Requests)
	}
	if res.ActualQPS > 12 {
		t.Errorf("achieved %.1f qps: dropped iterations must lower it", res.ActualQPS)
	}
	p, c := summary(res)
	if p.P50 < 250 || c.P50 < p.P50 {
		t.Errorf("p50 plain %.1f corrected %.1f ms, want >= 250", p.P50, c.P50)
	}
}

// TestKeepAliveAndHeaders: with keep-alive k6 uses at most one connection per
// VU; without, one per request (and the TCP connect is in the latency); the
// scenario's headers are sent.
func TestKeepAliveAndHeaders(t *testing.T) {
	needK6(t)
	var conns, badHeader atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Bookload-Test") != "yes" {
			badHeader.Add(1)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	req := request(srv.URL, 50, 3, time.Second)
	req.Scenario.Headers = []scenario.Header{{Name: "X-Bookload-Test", Value: "yes"}}
	res := runK6(t, req)
	if c := conns.Load(); c > 3 || res.Requests < 20 {
		t.Errorf("keep-alive: %d connections for %d requests, want <= 3", c, res.Requests)
	}
	conns.Store(0)
	req.Scenario.KeepAlive = false
	res = runK6(t, req)
	if c := conns.Load(); c < res.Requests {
		t.Errorf("keep-alive off: %d connections for %d requests, want one each", c, res.Requests)
	}
	if badHeader.Load() != 0 {
		t.Errorf("%d requests without the scenario's header", badHeader.Load())
	}
}

// TestInterrupt: cancelling the context stops k6 at once and the result is
// marked interrupted.
func TestInterrupt(t *testing.T) {
	needK6(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var lives atomic.Int64
	go func() {
		time.Sleep(1200 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	res, err := (&Engine{}).Run(ctx, request(srv.URL, 20, 2, 30*time.Second), func(l engine.Live) {
		if l.Requests > 0 {
			lives.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Error("not marked interrupted")
	}
	if el := time.Since(start); el > 8*time.Second {
		t.Errorf("took %v to stop", el)
	}
	t.Logf("stopped after %v; %d progress calls with requests", time.Since(start), lives.Load())
}

// fakeK6 writes a shell script that acts as k6 and writes body to the file
// given as --out json=FILE.
func fakeK6(t *testing.T, body string, exit int) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(data, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" = version ]; then echo "k6 v0.0.0-fake"; exit 0; fi
for a in "$@"; do case "$a" in json=*) cp %q "${a#json=}";; esac; done
echo "fake k6 says hello" >&2
exit %d
`, data, exit)
	bin := filepath.Join(dir, "k6")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestBadOutput: output that is not k6's JSON, or k6 failing, is a clear
// error that says where.
func TestBadOutput(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	req := request(srv.URL, 10, 1, 200*time.Millisecond)
	good := `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-01-01T00:00:00.1Z","value":1.5,"tags":{"status":"200"}}}` + "\n" +
		`{"metric":"http_req_blocked","type":"Point","data":{"time":"2026-01-01T00:00:00.1Z","value":0.01,"tags":{"status":"200"}}}` + "\n"
	cases := []struct {
		name, body string
		exit       int
		want       string
	}{
		{"not json", good + "this is not json\n", 0, "line 3 is not a JSON object"},
		{"broken json", `{"metric":"http_req_duration","type":"Point","data":{"time":}` + "\n", 0, "line 1: invalid character"},
		{"no value", `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-01-01T00:00:00Z","tags":{"status":"200"}}}` + "\n", 0, "without a time or value"},
		{"bad time", `{"metric":"http_req_duration","type":"Point","data":{"time":"yesterday","value":1,"tags":{"status":"200"}}}` + "\n", 0, "bad time"},
		{"unpaired", good + `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-01-01T00:00:00.2Z","value":1,"tags":{"status":"200"}}}` + "\n", 0, "not followed by its http_req_blocked"},
		{"empty", "", 0, "k6 wrote no samples"},
		{"no requests", `{"type":"Metric","data":{"name":"vus"},"metric":"vus"}` + "\n", 0, "k6 recorded no HTTP requests"},
		{"k6 fails", good, 107, "exit status 107"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := (&Engine{Binary: fakeK6(t, c.body, c.exit)}).Run(context.Background(), req, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if c.exit != 0 && !strings.Contains(err.Error(), "fake k6 says hello") {
				t.Errorf("error %v does not quote k6's output", err)
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		res, err := (&Engine{Binary: fakeK6(t, good, 0)}).Run(context.Background(), req, nil)
		if err != nil || res.Requests != 1 || res.Metadata["k6_version"] != "v0.0.0-fake" {
			t.Fatalf("res %+v err %v", res, err)
		}
		if p, _ := summary(res); p.P50 < 1.50 || p.P50 > 1.52 {
			t.Errorf("p50 %.3f ms, want 1.51 (duration + blocked)", p.P50)
		}
	})
}

// TestMissing: no k6 anywhere is an error that says how to get it.
func TestMissing(t *testing.T) {
	t.Setenv("BOOKINFO_TOOLS_DIR", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	_, err := Find()
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "make setup") || !strings.Contains(err.Error(), "go.k6.io/k6@"+Version) {
		t.Fatalf("err %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if err := (&Engine{}).Check(context.Background(), request(srv.URL, 10, 1, time.Second)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Check: %v, want ErrNotFound", err)
	}
	t.Setenv("BOOKLOAD_K6", filepath.Join(t.TempDir(), "nope"))
	if _, err := Find(); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "BOOKLOAD_K6") {
		t.Fatalf("err %v", err)
	}
}

// TestEnvNeverK6: the profile goes in BOOKLOAD_* variables, and the caller's
// K6_* variables (which would replace the script's scenarios) are not passed.
func TestEnvNeverK6(t *testing.T) {
	t.Setenv("K6_VUS", "50")
	t.Setenv("K6_DURATION", "1h")
	env, err := Env(request("http://127.0.0.1:1", 12.5, 3, 1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "BOOKLOAD_") {
			t.Errorf("script variable %s", kv)
		}
	}
	want := []string{"BOOKLOAD_RATE=12.5", "BOOKLOAD_CONNECTIONS=3", "BOOKLOAD_DURATION=1500ms", "BOOKLOAD_KEEPALIVE=true", "BOOKLOAD_URL=http://127.0.0.1:1/details/0"}
	for _, w := range want {
		if !slices.Contains(env, w) {
			t.Errorf("missing %s in %v", w, env)
		}
	}
	all, dropped := childEnv(env)
	for _, kv := range all {
		if strings.HasPrefix(kv, "K6_") {
			t.Errorf("passed %s", kv)
		}
	}
	if !slices.Contains(dropped, "K6_VUS") || !slices.Contains(dropped, "K6_DURATION") {
		t.Errorf("dropped %v", dropped)
	}
	if p := Period(12.5); p != 80*time.Millisecond {
		t.Errorf("Period(12.5) = %v", p)
	}
	if p := Period(4000); p != 250*time.Microsecond {
		t.Errorf("Period(4000) = %v", p)
	}
}
