package agentengine_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	flog "fortio.org/log"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agenttest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agentwire"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/agentengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortiorest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/registry"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

func TestMain(m *testing.M) {
	flog.SetLogLevelQuiet(flog.Critical)
	code := m.Run()
	agenttest.Cleanup()
	os.Exit(code)
}

func TestParseURL(t *testing.T) {
	cases := []struct {
		in, api, base, err string
	}{
		{in: "bookload+http://127.0.0.1:8080", api: "http://127.0.0.1:8080"},
		{in: "bookload+https://agent.example:8443/", api: "https://agent.example:8443"},
		{in: "bookload+http://127.0.0.1:8080?url=http://details.other:9080/", api: "http://127.0.0.1:8080", base: "http://details.other:9080"},
		{in: "http://127.0.0.1:8080", err: "scheme must be"},
		{in: "bookload+ftp://h:1", err: "scheme must be"},
		{in: "bookload+http://", err: "no agent host"},
		{in: "bookload+http://h:1/fortio/", err: "no path to an endpoint"},
		{in: "bookload+http://h:1/bookload/v1/status", err: "no path to an endpoint"},
		{in: "bookload+http://h:1/p/fortio/rest/run", err: "no path to an endpoint"},
		{in: "bookload+http://h:1/a/../b", err: "segment"},
		{in: "bookload+http://h:1/a//b", err: "segment"},
		{in: "bookload+http://u@h:1", err: "no user or fragment"},
		{in: "bookload+http://h:1#x", err: "no user or fragment"},
		// A base path: the agent behind the API server's service proxy.
		{in: "bookload+http://127.0.0.1:8001/api/v1/namespaces/ns/services/fortio:8080/proxy", api: "http://127.0.0.1:8001/api/v1/namespaces/ns/services/fortio:8080/proxy"},
		{in: "bookload+http://127.0.0.1:8001/api/v1/namespaces/ns/services/fortio:8080/proxy/?url=http://ratings:9080",
			api: "http://127.0.0.1:8001/api/v1/namespaces/ns/services/fortio:8080/proxy", base: "http://ratings:9080"},
		{in: "bookload+http://h:1/proxy?url=details:9080", err: "must be an http(s) base URL"},
		{in: "bookload+http://h:1/proxy?qps=3", err: "only query parameter"},
		{in: "bookload+http://h:1?qps=3", err: "only query parameter"},
		{in: "bookload+http://h:1?url=details:9080", err: "must be an http(s) base URL"},
	}
	for _, c := range cases {
		r, err := agentengine.ParseURL(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.in, err, c.err)
		case c.err == "" && (err != nil || r.API != c.api || r.Base != c.base):
			t.Errorf("%s: %+v %v, want API %s base %q", c.in, r, err, c.api, c.base)
		}
	}
	if got := (agentengine.Remote{}).LoadBase("ratings"); got != "http://ratings:9080" {
		t.Errorf("default base %s", got)
	}
	// The target grammar accepts the query, as for fortio+http.
	if _, err := loadtarget.Parse("a=bookload+http://127.0.0.1:8080?url=http://details:9080"); err != nil {
		t.Error(err)
	}
	if e, err := registry.ByScheme(loadtarget.Target{Name: "a", URL: "bookload+http://h:8080"}); err != nil || e.Name() != agentengine.Name {
		t.Errorf("bookload+http picks %v %v", e, err)
	}
}

// knownLatency answers after a fixed delay and records, for each request,
// how long its handler took (the reference at ns resolution: what any client
// measures is that plus the loopback and the client's own time).
type knownLatency struct {
	*httptest.Server
	delay time.Duration
	mu    sync.Mutex
	took  []time.Duration
}

func newKnownLatency(delay time.Duration) *knownLatency {
	k := &knownLatency{delay: delay}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		time.Sleep(k.delay)
		k.mu.Lock()
		k.took = append(k.took, time.Since(start))
		k.mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	return k
}

// handled returns the recorded handler times after the first skip ones
// (the engine's check, then fortio's warmup: one request per connection, not
// in its results), sorted.
func (k *knownLatency) handled(skip int) []time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	xs := slices.Clone(k.took[min(skip, len(k.took)):])
	slices.Sort(xs)
	return xs
}

// nearestRank is the exact p-th percentile of sorted xs in ms, as
// HdrHistogram defines percentiles.
func nearestRank(xs []time.Duration, p float64) float64 {
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return float64(xs[max(i, 0)]) / 1e6
}

func testScenario(qps float64, conns int, d time.Duration) *scenario.Scenario {
	return &scenario.Scenario{
		Name: "agent-test", Service: "details", Path: "/details/0", KeepAlive: true, Repetitions: 1,
		Timeout:  scenario.Duration(3 * time.Second),
		Headers:  []scenario.Header{{Name: "X-Bookload-Test", Value: "yes"}},
		Profiles: []scenario.Profile{{Name: "p", QPS: qps, Connections: conns, Duration: scenario.Duration(d)}},
	}
}

// runBoth runs s interleaved against local=http://<local server> (the
// in-process engine) and agent=bookload+http://<agent>?url=<agent's server>
// through runner.Run, as `bookload run` does, and returns both stored
// repetitions.
func runBoth(t *testing.T, s *scenario.Scenario, agentURL, localSrv, agentSrv string) (local, remote results.Rep) {
	t.Helper()
	out, err := runner.Run(context.Background(), runner.Config{
		Scenario: s,
		Targets: []loadtarget.Target{
			{Name: "local", URL: localSrv},
			{Name: "agent", URL: "bookload+" + agentURL + "?url=" + agentSrv},
		},
		Out: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := results.Open(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Status != results.StatusComplete || len(l.Reps) != 2 || l.Run.Engines["agent"] != agentengine.Name || l.Run.Engines["local"] != "fortio" {
		t.Fatalf("run: status %s, %d reps, engines %v", l.Run.Status, len(l.Reps), l.Run.Engines)
	}
	for _, r := range l.Reps {
		if r.Target == "local" {
			local = r
		} else {
			remote = r
		}
	}
	return local, remote
}

// TestAgreesWithLocal: a server that takes a fixed 10 ms, loaded by the
// local engine and through the agent at the same profile, interleaved by the
// runner. The agent's stored repetition has the local one's shape (both
// HdrHistograms, corrected latency measured, per-request precision) and its
// percentiles agree with the local ones and with the server's own handler
// times within 5% or 1 ms (p99: plus how late the machine let the server's
// sleeps end, a shared machine's stalls); corrected latency is plain plus
// fortio's own lateness. An attempt that fails is
// repeated, up to 4 attempts, each logged.
func TestAgreesWithLocal(t *testing.T) {
	a := agenttest.Start(t)
	var problems []string
	for attempt := 1; attempt <= 4; attempt++ {
		problems = agreement(t, a.URL, attempt)
		if len(problems) == 0 {
			return
		}
		t.Logf("attempt %d:\n  %s", attempt, strings.Join(problems, "\n  "))
	}
	t.Errorf("the agent and the local engine disagree in 4 attempts; the last:\n  %s", strings.Join(problems, "\n  "))
}

func agreement(t *testing.T, agentURL string, attempt int) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	const delay = 10 * time.Millisecond
	localSrv, agentSrv := newKnownLatency(delay), newKnownLatency(delay)
	defer localSrv.Close()
	defer agentSrv.Close()
	s := testScenario(40, 4, 1500*time.Millisecond)
	local, remote := runBoth(t, s, agentURL, localSrv.URL, agentSrv.URL)

	if remote.Engine != agentengine.Name || remote.EngineMetadata["precision"] != "per-request" || remote.EngineMetadata["corrected_latency"] != agentengine.CorrectedLatency ||
		remote.EngineMetadata["agent_engine"] != "fortio" || remote.EngineMetadata["agent_fortio"] == "" {
		t.Fatalf("agent repetition's engine %q, metadata %v", remote.Engine, remote.EngineMetadata)
	}
	truthL, truthA := localSrv.handled(1+4), agentSrv.handled(1+4)
	if int64(len(truthA)) != remote.Requests || int64(len(truthL)) != local.Requests {
		fail("the servers handled %d (local) and %d (agent) requests after the check and fortio's warmup; the repetitions say %d and %d", len(truthL), len(truthA), local.Requests, remote.Requests)
	}
	if remote.Requests < 50 || remote.Errors != 0 || remote.Codes["200"] != remote.Requests || math.Abs(remote.ActualQPS-40) > 2 {
		fail("agent: %d requests, %d errors, codes %v, %.1f qps; want ~60 at 40 qps, all 200", remote.Requests, remote.Errors, remote.Codes, remote.ActualQPS)
	}
	for _, r := range []results.Rep{local, remote} {
		for name, d := range map[string]results.Distribution{"plain": r.Latency.Plain, "corrected": r.Latency.Corrected} {
			h, err := latency.Decode(d.HdrHistogram)
			if err != nil || h.TotalCount() != r.Requests {
				t.Fatalf("%s %s histogram: %v, %d values for %d requests", r.Target, name, err, h.TotalCount(), r.Requests)
			}
		}
	}
	late := 0.0 // ms the slowest sleep overran: what the machine stalled
	for _, x := range append(slices.Clone(truthL), truthA...) {
		late = max(late, float64(x-delay)/1e6)
	}
	lp, ap, ac := local.Latency.Plain.SummaryMS, remote.Latency.Plain.SummaryMS, remote.Latency.Corrected.SummaryMS
	t.Logf("attempt %d: local p50 %.3f p90 %.3f p99 %.3f, agent p50 %.3f p90 %.3f p99 %.3f (corrected p99 %.3f) ms; the slowest sleep overran by %.2f ms",
		attempt, lp.P50, lp.P90, lp.P99, ap.P50, ap.P90, ap.P99, ac.P99, late)
	within := func(a, b, slack float64) bool { return math.Abs(a-b) <= math.Max(0.05*math.Max(a, b), 1+slack) }
	for _, m := range []string{"p50", "p75", "p90", "p99"} {
		l, _ := lp.Metric(m)
		r, _ := ap.Metric(m)
		c, _ := ac.Metric(m)
		p := map[string]float64{"p50": 50, "p75": 75, "p90": 90, "p99": 99}[m]
		tl, ta := nearestRank(truthL, p), nearestRank(truthA, p)
		slack := 0.0
		if m == "p99" {
			slack = late
		}
		if !within(l, r, slack) {
			fail("%s: local %.3f ms, agent %.3f ms: want within 5%% or %.1f ms", m, l, r, 1+slack)
		}
		// Every client measures the handler's time plus its own: never less,
		// and not much more on loopback.
		if r < ta-0.001 || !within(ta, r, slack) || l < tl-0.001 || !within(tl, l, slack) {
			fail("%s vs the servers' own handler times: agent %.3f (server %.3f), local %.3f (server %.3f) ms", m, r, ta, l, tl)
		}
		// A server that keeps up: corrected is the plain latency plus
		// fortio's own lateness in sending (timer wake-ups on a busy machine).
		if c < r || (m != "p99" && c > r+3) {
			fail("%s: agent plain %.3f ms, corrected %.3f ms: want plain + fortio's own lateness (< 3 ms)", m, r, c)
		}
	}
	return problems
}

// TestCorrectedThroughAgent: a server that stalls 500 ms of every second.
// Each connection has one request caught in a stall per second, so plain
// p75 stays at the server's speed, while half of the requests were due
// during a stall: corrected p75 is ~250 ms. Through the agent as locally.
func TestCorrectedThroughAgent(t *testing.T) {
	a := agenttest.Start(t)
	epoch := time.Now()
	stalling := func() *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if in := time.Since(epoch) % time.Second; in < 500*time.Millisecond {
				time.Sleep(500*time.Millisecond - in)
			}
			_, _ = w.Write([]byte("ok"))
		}))
	}
	ls, as := stalling(), stalling()
	defer ls.Close()
	defer as.Close()
	s := testScenario(40, 4, 2*time.Second)
	s.Warmup = scenario.Duration(300 * time.Millisecond) // the warmup path too
	local, remote := runBoth(t, s, a.URL, ls.URL, as.URL)
	for _, r := range []results.Rep{local, remote} {
		p, c := r.Latency.Plain.SummaryMS, r.Latency.Corrected.SummaryMS
		t.Logf("%s (%s): %d requests, plain p50 %.2f p75 %.2f p99 %.2f, corrected p50 %.2f p75 %.2f p99 %.2f ms",
			r.Target, r.Engine, r.Requests, p.P50, p.P75, p.P99, c.P50, c.P75, c.P99)
		if p.P75 > 50 || c.P75 < 100 || c.P99 < 300 {
			t.Errorf("%s: plain p75 %.2f ms, corrected p75 %.2f p99 %.2f ms; want plain p75 < 50, corrected p75 > 100 and p99 > 300", r.Target, p.P75, c.P75, c.P99)
		}
	}
}

// TestFortioRESTClientThroughAgent: fortio's own REST client (the
// fortio+http engine: rest/run with async and save, rest/status, the saved
// result under data/) works against the agent as against stock fortio.
func TestFortioRESTClientThroughAgent(t *testing.T) {
	a := agenttest.Start(t)
	srv := newKnownLatency(2 * time.Millisecond)
	defer srv.Close()
	tg := loadtarget.Target{Name: "fortio", URL: "fortio+" + a.URL + "?url=" + srv.URL}
	e, err := fortiorest.New(tg)
	if err != nil {
		t.Fatal(err)
	}
	e.Poll = 50 * time.Millisecond
	s := testScenario(50, 2, time.Second)
	req := engine.Request{Scenario: s, Profile: s.Profiles[0], Target: tg, Repetition: 1}
	if err := e.Check(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 40 || res.Errors != 0 || res.Metadata["precision"] != fortiorest.PrecisionBuckets {
		t.Errorf("fortio REST run through the agent: %d requests, %d errors, metadata %v", res.Requests, res.Errors, res.Metadata)
	}
	// The fortio UI is there too.
	resp, err := http.Get(a.URL + "/fortio/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("fortio UI: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestCheck: before any load, a missing agent, a target the agent cannot
// reach and a profile over the agent's limits each fail with what to do.
func TestCheck(t *testing.T) {
	a := agenttest.Start(t, "--max-connections", "8")
	srv := newKnownLatency(0)
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	check := func(agentURL, base string, s *scenario.Scenario) error {
		tg := loadtarget.Target{Name: "x", URL: "bookload+" + agentURL + "?url=" + base}
		e, err := agentengine.New(tg)
		if err != nil {
			t.Fatal(err)
		}
		return e.Check(context.Background(), engine.Request{Scenario: s, Profile: s.Profiles[0], Target: tg})
	}
	ok := testScenario(20, 2, time.Second)
	if err := check(a.URL, srv.URL, ok); err != nil {
		t.Errorf("good check: %v", err)
	}
	cases := []struct {
		name, agent, base string
		s                 *scenario.Scenario
		says              string
	}{
		{"no agent", dead.URL, srv.URL, ok, "no bookload agent answers"},
		{"unreachable service", a.URL, dead.URL, ok, `service "details" deployed`},
		{"over the limit", a.URL, srv.URL, testScenario(100, 9, time.Second), "profile.connections"},
	}
	// A second profile over the limit is found too, and so is the warmup.
	two := testScenario(20, 2, time.Second)
	two.Profiles = append(two.Profiles, scenario.Profile{Name: "big", QPS: 100, Connections: 9, Duration: scenario.Duration(time.Second)})
	cases = append(cases, struct {
		name, agent, base string
		s                 *scenario.Scenario
		says              string
	}{"second profile", a.URL, srv.URL, two, "refuses profile big"})
	for _, c := range cases {
		err := check(c.agent, c.base, c.s)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.says)
		}
	}
}

// TestInterrupt: cancelling the context (Ctrl-C) returns an interrupted
// result at once and frees the agent; the live line had counts from the
// agent before that.
func TestInterrupt(t *testing.T) {
	a := agenttest.Start(t)
	srv := newKnownLatency(time.Millisecond)
	defer srv.Close()
	tg := loadtarget.Target{Name: "x", URL: "bookload+" + a.URL + "?url=" + srv.URL}
	e, err := agentengine.New(tg)
	if err != nil {
		t.Fatal(err)
	}
	e.Poll = 50 * time.Millisecond
	s := testScenario(50, 2, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen int64
	live := func(l engine.Live) {
		mu.Lock()
		defer mu.Unlock()
		seen = max(seen, l.Requests)
		if seen >= 20 {
			cancel()
		}
	}
	go func() { time.Sleep(10 * time.Second); cancel() }()
	res, err := e.Run(ctx, engine.Request{Scenario: s, Profile: s.Profiles[0], Target: tg, Repetition: 1}, live)
	if err != nil || !res.Interrupted {
		t.Fatalf("run cancelled: %+v %v, want an interrupted result", res, err)
	}
	mu.Lock()
	if seen < 20 {
		t.Errorf("live progress saw at most %d requests before the 10 s cancel", seen)
	}
	mu.Unlock()
	// The agent is free again: the next check passes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := e.Check(context.Background(), engine.Request{Scenario: s, Profile: s.Profiles[0], Target: tg})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent still busy 10 s after the client went away: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestThroughServiceProxyPath: the agent behind a proxy that serves it under
// a prefix, as the API server's service proxy does: check, a run with
// progress, and the stored repetition go through the prefix.
func TestThroughServiceProxyPath(t *testing.T) {
	a := agenttest.Start(t)
	srv := newKnownLatency(time.Millisecond)
	defer srv.Close()
	const prefix = "/api/v1/namespaces/ns-1/services/fortio:8080/proxy"
	agentURL, err := url.Parse(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	rp := httputil.NewSingleHostReverseProxy(agentURL)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok {
			http.Error(w, "no such service", http.StatusNotFound)
			return
		}
		mu.Lock()
		seen[rest]++
		mu.Unlock()
		r.URL.Path, r.URL.RawPath = rest, ""
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	s := testScenario(20, 2, time.Second)
	tg := loadtarget.Target{Name: "x", URL: "bookload+" + proxy.URL + prefix + "?url=" + srv.URL}
	if _, err := loadtarget.Parse(tg.Name + "=" + tg.URL); err != nil {
		t.Fatal(err)
	}
	out, err := runner.Run(context.Background(), runner.Config{Scenario: s, Targets: []loadtarget.Target{tg}, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := results.Open(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Reps) != 1 || l.Reps[0].Requests < 15 || l.Reps[0].EngineMetadata["agent"] != proxy.URL+prefix {
		t.Fatalf("through the prefix: %d reps, %+v", len(l.Reps), l.Reps)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{agentwire.StatusPath, agentwire.CheckPath, agentwire.RunPath} {
		if seen[p] == 0 {
			t.Errorf("%s never reached the agent through %s (seen %v)", p, prefix, seen)
		}
	}
}
