package e2e

import (
	"io"
	"net/http"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/periodic"
)

// fortioRun offers qps over conns to url for d with fortio's default (fast)
// client, the one bookload uses, and returns its results.
func fortioRun(t *testing.T, url string, qps float64, conns int, d time.Duration) *fhttp.HTTPRunnerResults {
	t.Helper()
	o := fhttp.HTTPRunnerOptions{
		RunnerOptions: periodic.RunnerOptions{QPS: qps, NumThreads: conns, Duration: d, Out: io.Discard},
		HTTPOptions:   fhttp.HTTPOptions{URL: url},
	}
	res, err := fhttp.RunHTTPTest(&o)
	if err != nil {
		t.Fatalf("fortio %s: %v", url, err)
	}
	return res
}

func percentile(res *fhttp.HTTPRunnerResults, p float64) time.Duration {
	h := res.DurationHistogram.CalcPercentiles([]float64{p})
	return time.Duration(h.Percentiles[0].Value * float64(time.Second))
}

// The legacy profile must really show the classic sample's Nagle stall on
// details: WEBrick writes head and body separately, and without TCP_NODELAY
// the body waits for the client's delayed ACK (~40 ms).
func TestLegacyDetailsStallsTunedDoesNot(t *testing.T) {
	tuned, legacy := stackV2.need(t), stackLegacy.need(t)
	rt := fortioRun(t, tuned.url("details", "/details/0"), 100, 10, 3*time.Second)
	rl := fortioRun(t, legacy.url("details", "/details/0"), 100, 10, 3*time.Second)
	pt, pl := percentile(rt, 90), percentile(rl, 90)
	t.Logf("details p90 at 100 RPS / 10 keep-alive connections: tuned %v, legacy %v (%d and %d requests)",
		pt, pl, rt.DurationHistogram.Count, rl.DurationHistogram.Count)
	for name, r := range map[string]*fhttp.HTTPRunnerResults{"tuned": rt, "legacy": rl} {
		if r.RetCodes[200] != r.DurationHistogram.Count || r.DurationHistogram.Count < 250 {
			t.Errorf("%s run: %v of %d requests", name, r.RetCodes, r.DurationHistogram.Count)
		}
	}
	if pl < pt+10*time.Millisecond {
		t.Errorf("legacy p90 %v is not 10 ms above tuned p90 %v: the HTTP_NODELAY knob has no effect", pl, pt)
	}
}

// With keep-alive off every service must still frame its responses:
// fortio's fast client would otherwise wait out its 3 s timeout each time.
func TestKeepAliveOffIsFramedForFortio(t *testing.T) {
	st := stackClose.need(t)
	paths := map[string]string{
		"productpage": "/productpage", "details": "/details/0", "reviews": "/reviews/0", "ratings": "/ratings/0",
	}
	for svc, path := range paths {
		t.Run(svc, func(t *testing.T) {
			url := st.url(svc, path)
			resp, err := http.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if !resp.Close {
				t.Errorf("%s with HTTP_KEEPALIVE=false did not send Connection: close", svc)
			}
			r := fortioRun(t, url, 20, 2, time.Second)
			if max := time.Duration(r.DurationHistogram.Max * float64(time.Second)); max > time.Second {
				t.Errorf("%s: slowest of %d requests took %v: a response is not framed", svc, r.DurationHistogram.Count, max)
			}
			if r.RetCodes[200] != r.DurationHistogram.Count {
				t.Errorf("%s: status codes %v", svc, r.RetCodes)
			}
		})
	}
}
