package fortioengine

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/enginetest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

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

func run(t *testing.T, req engine.Request) *engine.Result {
	t.Helper()
	res, err := (&Engine{}).Run(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted {
		t.Fatal("interrupted")
	}
	return res
}

// nearestRank is the exact p-th percentile of xs (sorted), as HdrHistogram defines it.
func nearestRank(xs []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return xs[max(i, 0)]
}

// TestFixedDistribution: a server whose handler time follows a known spread
// (30-90 ms, evenly); the client's percentiles must be within 2% of the exact
// percentiles of what the server did. (Tens of ms so that loopback and
// goroutine wake-up overhead on a busy 2-core machine stays well under 2%.)
func TestFixedDistribution(t *testing.T) {
	var mu sync.Mutex
	var served []time.Duration
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		i := n.Add(1)
		// A fixed permutation of 100 evenly spaced delays (37 is coprime to 100).
		d := 30*time.Millisecond + time.Duration((i*37)%100)*600*time.Microsecond
		time.Sleep(d)
		mu.Lock()
		served = append(served, time.Since(start))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"id":0}`))
	}))
	defer srv.Close()

	res := run(t, request(srv.URL, 60, 8, 2*time.Second))
	mu.Lock()
	defer mu.Unlock()
	// fortio's warmup sends one request per connection before the run.
	truth := slices.Clone(served[len(served)-int(res.Requests):])
	slices.Sort(truth)
	t.Logf("duration %v qps %.1f requests %d served %d", res.Duration, res.ActualQPS, res.Requests, len(served))
	if res.Requests < 100 || res.Errors != 0 {
		t.Fatalf("requests %d errors %d, want ~120 and 0", res.Requests, res.Errors)
	}
	got := latency.Summarize(res.Latency.Plain, res.Latency.PlainSum)
	var sum time.Duration
	for _, d := range truth {
		sum += d
	}
	checks := []struct {
		name string
		got  float64
		want time.Duration
	}{
		{"avg", got.Avg, sum / time.Duration(len(truth))},
		{"p50", got.P50, nearestRank(truth, 50)},
		{"p75", got.P75, nearestRank(truth, 75)},
		{"p90", got.P90, nearestRank(truth, 90)},
		{"p99", got.P99, nearestRank(truth, 99)},
	}
	for _, c := range checks {
		want := float64(c.want) / 1e6
		if rel := (c.got - want) / want; rel < 0 || rel > 0.02 {
			t.Errorf("%s = %.3f ms, server-side truth %.3f ms (%+.2f%%), want within +2%%", c.name, c.got, want, 100*rel)
		}
	}
}

// TestStallingServer: the server stalls 500 ms once a second. Only the one
// request per connection that is caught in the stall sees it (0.5% of them),
// so plain p99 looks fine; but half of the requests were due during stalls and
// went out late, which the corrected latency shows.
func TestStallingServer(t *testing.T) {
	epoch := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if phase := time.Since(epoch) % time.Second; phase < 500*time.Millisecond {
			time.Sleep(500*time.Millisecond - phase)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()

	res := run(t, request(srv.URL, 400, 2, 2*time.Second))
	plain := latency.Summarize(res.Latency.Plain, res.Latency.PlainSum)
	corr := latency.Summarize(res.Latency.Corrected, res.Latency.CorrectedSum)
	t.Logf("plain p50 %.2f p99 %.2f ms; corrected p50 %.2f p99 %.2f ms; %d requests in %v", plain.P50, plain.P99, corr.P50, corr.P99, res.Requests, res.Duration)
	if plain.P99 > 50 {
		t.Errorf("plain p99 %.1f ms: the stall should hit under 1%% of requests", plain.P99)
	}
	if corr.P99 < 300 || corr.P99 < 10*plain.P99 {
		t.Errorf("corrected p99 %.1f ms, want far above plain p99 %.1f ms (near 500)", corr.P99, plain.P99)
	}
	var late int64
	for _, b := range res.Latency.Corrected.Distribution() {
		if b.From > 100_000 {
			late += b.Count
		}
	}
	// Requests due in the first 400 ms of each 500 ms stall wait > 100 ms: ~40%.
	if frac := float64(late) / float64(res.Requests); frac < 0.25 || frac > 0.55 {
		t.Errorf("%.0f%% of corrected latencies above 100 ms, want about 40%%", 100*frac)
	}
}

// TestOnTimeServer: against a fast server the schedule is kept, and the
// corrected latency must not invent delay.
func TestOnTimeServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	// 50 qps per connection: a schedule off by one interval over the run (the
	// classic mistake is fortio's n/(n-1) stretch) would add ~10 ms at the median.
	res := run(t, request(srv.URL, 100, 2, time.Second))
	plain := latency.Summarize(res.Latency.Plain, res.Latency.PlainSum)
	corr := latency.Summarize(res.Latency.Corrected, res.Latency.CorrectedSum)
	if corr.P50 > plain.P50+5 || corr.P50 < plain.P50 {
		t.Errorf("corrected p50 %.3f ms vs plain %.3f ms: the derived schedule drifts", corr.P50, plain.P50)
	}
	if math.Abs(res.ActualQPS-100)/100 > 0.05 {
		t.Errorf("achieved %.1f qps, want 100", res.ActualQPS)
	}
	if res.Latency.Plain.TotalCount() != res.Requests {
		t.Errorf("recorded %d latencies, fortio counted %d requests", res.Latency.Plain.TotalCount(), res.Requests)
	}
}

// TestFailingServer: errors are counted by status, never hidden.
func TestFailingServer(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case i%10 == 0: // drop the connection without an answer
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case i%4 == 0:
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	res := run(t, request(srv.URL, 200, 4, time.Second))
	ok := res.Codes["200"]
	if res.Codes["503"] == 0 || res.Codes["-1"] == 0 {
		t.Errorf("codes %v: want 503s and socket errors (-1) counted", res.Codes)
	}
	if res.Errors != res.Requests-ok || res.Errors == 0 {
		t.Errorf("errors %d, requests %d, 200s %d: every non-2xx must count as an error", res.Errors, res.Requests, ok)
	}
	if frac := float64(res.Errors) / float64(res.Requests); frac < 0.2 || frac > 0.5 {
		t.Errorf("error fraction %.2f, want about a third", frac)
	}
}

// TestInterrupt: cancelling the context stops the repetition promptly.
func TestInterrupt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := (&Engine{}).Run(ctx, request(srv.URL, 50, 2, 20*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Error("result not marked interrupted")
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v to stop", el)
	}
}

// TestNoKeepAlive: keepalive: false opens a connection per request.
func TestNoKeepAlive(t *testing.T) {
	var closes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Connection"), "close") {
			closes.Add(1)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	req := request(srv.URL, 100, 2, 500*time.Millisecond)
	req.Scenario.KeepAlive = false
	req.Scenario.Headers = []scenario.Header{{Name: "X-Bench", Value: "1"}}
	res := run(t, req)
	if sockets := res.Metadata["sockets_used"].(int64); sockets < res.Requests {
		t.Errorf("%d sockets for %d requests, want one each", sockets, res.Requests)
	}
	if closes.Load() < res.Requests {
		t.Errorf("%d requests carried Connection: close, want all %d", closes.Load(), res.Requests)
	}
}

func TestCheck(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	if err := (&Engine{}).Check(context.Background(), request(url, 1, 1, time.Second)); err != nil {
		t.Errorf("a 404 still answers: %v", err)
	}
	srv.Close()
	err := (&Engine{}).Check(context.Background(), request(url, 1, 1, time.Second))
	if err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("closed server: %v", err)
	}
}

// TestUniform: by default fortio sends every connection's request of a period
// at the same instant; with the scenario's uniform: true the connections are
// staggered by 1/qps. The server's arrival times show which.
func TestUniform(t *testing.T) {
	medianGap := func(uniform bool) time.Duration {
		return enginetest.MedianArrivalGap(func(url string) {
			req := request(url, 100, 10, time.Second) // 10 ms between requests when spread
			req.Scenario.Uniform = uniform
			run(t, req)
		})
	}
	if g := medianGap(false); g > 2*time.Millisecond {
		t.Errorf("default arrival: median gap %v between requests, want bursts (< 2 ms)", g)
	}
	if g := medianGap(true); g < 5*time.Millisecond {
		t.Errorf("uniform arrival: median gap %v between requests, want ~10 ms", g)
	}
}

// TestNoLiveAfterReturn: live is never running once Run has returned (the
// agent clears what live writes to right after). A live call that takes
// 300 ms is almost always in progress when a 1 s run ends.
func TestNoLiveAfterReturn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var mu sync.Mutex
	var lastEnd time.Time
	calls := 0
	live := func(engine.Live) {
		time.Sleep(300 * time.Millisecond)
		mu.Lock()
		lastEnd = time.Now()
		calls++
		mu.Unlock()
	}
	if _, err := (&Engine{}).Run(context.Background(), request(srv.URL, 20, 2, time.Second), live); err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	time.Sleep(400 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if calls == 0 || lastEnd.After(returned) {
		t.Errorf("%d live calls, the last ending %v after Run returned", calls, lastEnd.Sub(returned))
	}
}
