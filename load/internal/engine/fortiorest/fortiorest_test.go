package fortiorest

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fortio.org/fortio/rapi"
	"fortio.org/fortio/stats"
	flog "fortio.org/log"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/enginetest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

func TestMain(m *testing.M) {
	// The in-process fortio server logs every REST call at info level.
	flog.SetLogLevelQuiet(flog.Critical)
	os.Exit(m.Run())
}

// fortioServer serves fortio's REST API and data directory in-process, as
// the stock `fortio server` does on 8080 (rapi keeps its state in package
// globals, so these tests do not run in parallel). dataDir "" saves nothing.
func fortioServer(t *testing.T, dataDir string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	rapi.AddHandlers(mux, "", "/fortio/", dataDir)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// remoteURL is the fortio+http target URL of srv loading base.
func remoteURL(srv *httptest.Server, base string) string {
	u := "fortio+" + srv.URL
	if base != "" {
		u += "?url=" + base
	}
	return u
}

func request(t *testing.T, targetURL string, qps float64, conns int, d time.Duration) (*Engine, engine.Request) {
	t.Helper()
	tg := loadtarget.Target{Name: "remote", URL: targetURL}
	if err := tg.Validate(); err != nil {
		t.Fatal(err)
	}
	e, err := New(tg)
	if err != nil {
		t.Fatal(err)
	}
	e.Poll = 50 * time.Millisecond
	return e, engine.Request{
		Scenario: &scenario.Scenario{
			Name: "test", Service: "details", Path: "/details/0", KeepAlive: true,
			Timeout: scenario.Duration(2 * time.Second), Repetitions: 1,
			Headers: []scenario.Header{{Name: "X-Bookload-Test", Value: "yes"}},
		},
		Profile:    scenario.Profile{Name: "p", QPS: qps, Connections: conns, Duration: scenario.Duration(d)},
		Target:     tg,
		Repetition: 1,
	}
}

// TestRunThroughREST: fortio's REST handler loads a server whose handler time
// is spread evenly over 20-60 ms; the result must carry fortio's counts and
// codes, percentiles within fortio's bucket precision of the server's truth,
// the exact average, the scenario's header, and the precision metadata.
func TestRunThroughREST(t *testing.T) {
	var mu sync.Mutex
	var served []time.Duration
	var n atomic.Int64
	var badHeader atomic.Int64
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if r.URL.Path != "/details/0" || r.Header.Get("X-Bookload-Test") != "yes" {
			badHeader.Add(1)
		}
		i := n.Add(1)
		time.Sleep(20*time.Millisecond + time.Duration((i*37)%100)*400*time.Microsecond)
		mu.Lock()
		served = append(served, time.Since(start))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"id":0}`))
	}))
	defer app.Close()
	fs := fortioServer(t, t.TempDir())
	e, req := request(t, remoteURL(fs, app.URL), 60, 6, 2*time.Second)
	if err := e.Check(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	served = nil
	mu.Unlock()
	var lives atomic.Int64
	res, err := e.Run(context.Background(), req, func(l engine.Live) {
		if l.Requests >= 0 {
			t.Errorf("live counts %d: the remote engine does not know them before the end", l.Requests)
		}
		lives.Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted || res.Engine != Name {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("requests %d served %d qps %.1f duration %v sockets %v", res.Requests, len(served), res.ActualQPS, res.Duration, res.Metadata["sockets_used"])
	if res.Requests < 100 || res.Errors != 0 || res.Codes["200"] != res.Requests {
		t.Fatalf("requests %d errors %d codes %v, want ~120 OK", res.Requests, res.Errors, res.Codes)
	}
	if badHeader.Load() != 0 {
		t.Errorf("%d requests without the scenario's path or header", badHeader.Load())
	}
	if lives.Load() == 0 {
		t.Error("no progress callback")
	}
	if res.Latency.Plain.TotalCount() != res.Requests || res.Latency.Corrected.TotalCount() != res.Requests {
		t.Errorf("histogram counts %d/%d, want %d", res.Latency.Plain.TotalCount(), res.Latency.Corrected.TotalCount(), res.Requests)
	}
	if math.Abs(res.ActualQPS-60) > 6 || res.RequestedQPS != 60 {
		t.Errorf("qps requested %v actual %v, want 60", res.RequestedQPS, res.ActualQPS)
	}
	if res.Metadata["precision"] != PrecisionBuckets || res.Metadata["corrected_latency"] != CorrectedEqualsPlain {
		t.Errorf("metadata %v lacks the precision marks", res.Metadata)
	}
	if s, ok := res.Metadata["sockets_used"].(int64); !ok || s != 6 {
		t.Errorf("sockets %v, want 6 (keep-alive)", res.Metadata["sockets_used"])
	}
	var native map[string]any
	if err := json.Unmarshal(res.Native, &native); err != nil || native["RetCodes"] == nil || native["DurationHistogram"] == nil {
		t.Errorf("native result is not fortio's JSON: %v %.200s", err, res.Native)
	}

	// fortio's warmup sends one request per connection before the run.
	truth := slices.Clone(served[len(served)-int(res.Requests):])
	slices.Sort(truth)
	var sum time.Duration
	for _, d := range truth {
		sum += d
	}
	got := latency.Summarize(res.Latency.Plain, res.Latency.PlainSum)
	exactAvg := float64(sum) / float64(len(truth)) / 1e6
	if rel := (got.Avg - exactAvg) / exactAvg; rel < 0 || rel > 0.03 {
		t.Errorf("avg %.3f ms, server-side %.3f ms (%+.2f%%): fortio's sum is exact", got.Avg, exactAvg, 100*rel)
	}
	for _, c := range []struct {
		name string
		got  float64
		p    float64
	}{{"p50", got.P50, 50}, {"p75", got.P75, 75}, {"p90", got.P90, 90}} {
		want := float64(truth[int(math.Ceil(c.p/100*float64(len(truth))))-1]) / 1e6
		// 5 ms buckets from 20 to 50 ms, 10 ms above: allow the bucket
		// interpolation ±6% plus the client-side overhead.
		if rel := (c.got - want) / want; rel < -0.06 || rel > 0.08 {
			t.Errorf("%s = %.3f ms, server-side truth %.3f ms (%+.2f%%)", c.name, c.got, want, 100*rel)
		}
	}
	if got.Max < float64(truth[len(truth)-1])/1e6 || got.Min < float64(truth[0])/1e6 {
		t.Errorf("min %.3f max %.3f ms, server-side %.3f %.3f", got.Min, got.Max, float64(truth[0])/1e6, float64(truth[len(truth)-1])/1e6)
	}
}

// TestKeepAliveOff: keepalive: false must reach the app as one connection per
// request with Connection: close.
func TestKeepAliveOff(t *testing.T) {
	var conns, closeHdr, reqs atomic.Int64
	app := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		if strings.EqualFold(r.Header.Get("Connection"), "close") {
			closeHdr.Add(1)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	app.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	app.Start()
	defer app.Close()
	fs := fortioServer(t, t.TempDir())
	e, req := request(t, remoteURL(fs, app.URL), 40, 2, time.Second)
	req.Scenario.KeepAlive = false
	res, err := e.Run(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("requests %d (server %d) connections %d close headers %d sockets %v", res.Requests, reqs.Load(), conns.Load(), closeHdr.Load(), res.Metadata["sockets_used"])
	if res.Requests < 30 || res.Errors != 0 {
		t.Fatalf("requests %d errors %d", res.Requests, res.Errors)
	}
	if closeHdr.Load() < res.Requests || conns.Load() < res.Requests {
		t.Errorf("%d connections and %d Connection: close for %d requests, want one each", conns.Load(), closeHdr.Load(), res.Requests)
	}
}

// TestInterrupt: cancelling the context stops the remote run through
// rest/stop, promptly, and the result is marked interrupted.
func TestInterrupt(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer app.Close()
	fs := fortioServer(t, t.TempDir())
	e, req := request(t, remoteURL(fs, app.URL), 50, 2, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	res, err := e.Run(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Error("not marked interrupted")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to stop a 30 s run", d)
	}
	if n := len(rapi.GetAllRuns()); n != 0 {
		t.Errorf("%d runs still on the fortio server after the stop", n)
	}
}

// TestFortioErrors: what fortio refuses or cannot do is an error naming it.
func TestFortioErrors(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer app.Close()

	t.Run("unresolvable in-cluster host", func(t *testing.T) {
		fs := fortioServer(t, t.TempDir())
		e, req := request(t, remoteURL(fs, "http://no-such-service.invalid:9080"), 20, 1, 500*time.Millisecond)
		if err := e.Check(context.Background(), req); err == nil || !strings.Contains(err.Error(), "cannot load http://no-such-service.invalid:9080/details/0") {
			t.Errorf("Check: %v", err)
		}
		_, err := e.Run(context.Background(), req, nil)
		if err == nil || !strings.Contains(err.Error(), "fortio") {
			t.Errorf("Run: %v", err)
		}
		t.Log(err)
	})
	t.Run("target refuses connections", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + l.Addr().String()
		l.Close()
		fs := fortioServer(t, t.TempDir())
		e, req := request(t, remoteURL(fs, closed), 20, 1, 500*time.Millisecond)
		err = e.Check(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), "does not answer inside the cluster") {
			t.Errorf("Check: %v", err)
		}
	})
	t.Run("no data dir", func(t *testing.T) {
		fs := fortioServer(t, "")
		e, req := request(t, remoteURL(fs, app.URL), 20, 1, 300*time.Millisecond)
		_, err := e.Run(context.Background(), req, nil)
		if err == nil || !strings.Contains(err.Error(), "saved no result") || !strings.Contains(err.Error(), "-data-dir") {
			t.Errorf("Run: %v", err)
		}
	})
	t.Run("busy", func(t *testing.T) {
		fs := fortioServer(t, t.TempDir())
		e, req := request(t, remoteURL(fs, app.URL), 20, 1, 10*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = e.Run(ctx, req, nil)
		}()
		deadline := time.Now().Add(3 * time.Second)
		for len(rapi.GetAllRuns()) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		err := e.Check(context.Background(), req)
		cancel()
		<-done
		if err == nil || !strings.Contains(err.Error(), "already running load") {
			t.Errorf("Check while another run is on: %v", err)
		}
	})
	t.Run("not fortio", func(t *testing.T) {
		e, req := request(t, "fortio+"+app.URL, 20, 1, time.Second)
		if err := e.Check(context.Background(), req); err == nil || !strings.Contains(err.Error(), "fortio does not answer") {
			t.Errorf("Check against a non-fortio server: %v", err)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		e, req := request(t, "fortio+http://"+addr, 20, 1, time.Second)
		err = e.Check(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), "is the port-forward running") {
			t.Errorf("Check: %v", err)
		}
		if _, err := e.Run(context.Background(), req, nil); err == nil {
			t.Error("Run against nothing succeeded")
		}
	})
}

func TestParseURL(t *testing.T) {
	cases := []struct {
		in, api, base, load, err string
	}{
		{in: "fortio+http://127.0.0.1:8080", api: "http://127.0.0.1:8080/fortio/", load: "http://details:9080/details/0"},
		{in: "fortio+http://127.0.0.1:8080/", api: "http://127.0.0.1:8080/fortio/", load: "http://details:9080/details/0"},
		{in: "fortio+https://lb.example/perf/fortio", api: "https://lb.example/perf/fortio/", load: "http://details:9080/details/0"},
		{in: "fortio+http://127.0.0.1:8080?url=http://productpage.bookinfo-ambient:9080/", api: "http://127.0.0.1:8080/fortio/",
			base: "http://productpage.bookinfo-ambient:9080", load: "http://productpage.bookinfo-ambient:9080/details/0"},
		{in: "fortio+ftp://h", err: "scheme must be"},
		{in: "http://h", err: "scheme must be"},
		{in: "fortio+http://", err: "no fortio host"},
		{in: "fortio+http://h#x", err: "fragment"},
		{in: "fortio+http://h?qps=5", err: "only query parameter"},
		{in: "fortio+http://h?url=a&url=b", err: "only query parameter"},
		{in: "fortio+http://h?url=tcp://x:1", err: "http(s) base URL"},
		{in: "fortio+http://h?url=/relative", err: "http(s) base URL"},
	}
	for _, c := range cases {
		r, err := ParseURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseURL(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || r.API != c.api || r.Base != c.base || r.LoadURL("details", "/details/0") != c.load {
			t.Errorf("ParseURL(%q) = %+v %q, %v", c.in, r, r.LoadURL("details", "/details/0"), err)
		}
	}
	if _, err := New(loadtarget.Target{Name: "x", URL: "fortio+http://h?nope=1"}); err == nil || !strings.Contains(err.Error(), "target x") {
		t.Errorf("New with a bad URL: %v", err)
	}
}

// TestFromFortio: the rebuilt histogram keeps fortio's count, exact sum, min
// and max, and its percentiles agree with fortio's own interpolation.
func TestFromFortio(t *testing.T) {
	fh := stats.NewHistogram(0, Resolution)
	var sum float64
	for i := range 5000 {
		v := 0.0008 + 0.00004*float64((i*7919)%1000) // 0.8-40.8 ms
		if i%500 == 0 {
			v = 0.250 + float64(i)/1e5 // a tail in the 100-200-300 ms buckets
		}
		fh.Record(v)
		sum += v
	}
	ps := []float64{50, 75, 90, 99, 99.9}
	d := fh.Export().CalcPercentiles(ps)
	h, s := FromFortio(d)
	got := latency.Summarize(h, s)
	if got.Count != d.Count {
		t.Fatalf("count %d, want %d", got.Count, d.Count)
	}
	if math.Abs(got.Avg-1000*sum/5000) > 1e-6 {
		t.Errorf("avg %.6f, want exact %.6f", got.Avg, 1000*sum/5000)
	}
	if math.Abs(got.Min-1000*d.Min) > 0.002 || math.Abs(got.Max-1000*d.Max)/(1000*d.Max) > 0.001 {
		t.Errorf("min %.3f max %.3f, fortio %.3f %.3f", got.Min, got.Max, 1000*d.Min, 1000*d.Max)
	}
	for i, p := range ps {
		m, _ := got.Metric(map[float64]string{50: "p50", 75: "p75", 90: "p90", 99: "p99", 99.9: "p99.9"}[p])
		want := 1000 * d.Percentiles[i].Value
		if rel := math.Abs(m-want) / want; rel > 0.02 {
			t.Errorf("p%g = %.3f ms, fortio's interpolation %.3f ms (%.1f%% off)", p, m, want, 100*rel)
		}
	}
	if h, s := FromFortio(nil); h.TotalCount() != 0 || s != 0 {
		t.Error("nil histogram")
	}
	one := stats.NewHistogram(0, Resolution)
	one.Record(0.0042)
	if got := latency.Summarize(FromFortio(one.Export())); got.Count != 1 || math.Abs(got.Min-4.2) > 0.005 || math.Abs(got.Max-4.2) > 0.005 {
		t.Errorf("one value: %+v", got)
	}
}

// TestUniform: the scenario's uniform: true reaches the remote fortio, which
// then staggers its connections by 1/qps instead of sending every
// connection's request of a period at the same instant.
func TestUniform(t *testing.T) {
	medianGap := func(uniform bool) time.Duration {
		return enginetest.MedianArrivalGap(func(url string) {
			fs := fortioServer(t, t.TempDir())
			e, req := request(t, remoteURL(fs, url), 100, 10, time.Second) // 10 ms apart when spread
			req.Scenario.Uniform = uniform
			if _, err := e.Run(context.Background(), req, nil); err != nil {
				t.Error(err)
			}
		})
	}
	if g := medianGap(false); g > 2*time.Millisecond {
		t.Errorf("default arrival: median gap %v between requests, want bursts (< 2 ms)", g)
	}
	if g := medianGap(true); g < 5*time.Millisecond {
		t.Errorf("uniform arrival: median gap %v between requests, want ~10 ms", g)
	}
}
