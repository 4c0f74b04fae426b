package e2e

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serverTiming parses a Server-Timing value of name;dur=ms entries (the
// services send nothing else) into name -> ms; a malformed or repeated entry
// fails the test.
func serverTiming(t *testing.T, header string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, entry := range strings.Split(header, ",") {
		name, dur, ok := strings.Cut(strings.TrimSpace(entry), ";dur=")
		ms, err := strconv.ParseFloat(dur, 64)
		if !ok || err != nil || name == "" || ms < 0 {
			t.Fatalf("Server-Timing entry %q in %q", entry, header)
		}
		if _, dup := out[name]; dup {
			t.Fatalf("Server-Timing repeats %q: %q", name, header)
		}
		out[name] = ms
	}
	return out
}

// timedGet fetches url and returns the answer's Server-Timing header and
// the latency the client saw.
func timedGet(t *testing.T, url string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return resp.Header.Get("Server-Timing"), took
}

// One answer to /productpage describes the whole call tree (docs/contract.md,
// "Server-Timing"), and its numbers nest as the calls do: every wait covers
// the server time under it, and the client saw at least productpage's time.
func TestServerTimingDescribesTheCallTree(t *testing.T) {
	s := stackV2.need(t)
	header, took := timedGet(t, s.url("productpage", "/productpage"))
	got := serverTiming(t, header)
	want := []string{"app", "details", "details.app", "reviews", "reviews.app", "reviews.ratings", "reviews.ratings.app"}
	if len(got) != len(want) {
		t.Fatalf("Server-Timing %q: want exactly %v", header, want)
	}
	for _, name := range want {
		if _, ok := got[name]; !ok {
			t.Fatalf("Server-Timing %q has no %s", header, name)
		}
	}
	// Rounded to µs in each service: allow that much per comparison.
	const tick = 0.002
	covers := [][2]string{
		{"app", "details"}, {"app", "reviews"},
		{"details", "details.app"}, {"reviews", "reviews.app"},
		{"reviews.app", "reviews.ratings"}, {"reviews.ratings", "reviews.ratings.app"},
	}
	for _, c := range covers {
		if got[c[0]]+tick < got[c[1]] {
			t.Errorf("%s (%.3f ms) is shorter than %s (%.3f ms) under it: %q", c[0], got[c[0]], c[1], got[c[1]], header)
		}
	}
	if client := float64(took) / 1e6; client+tick < got["app"] {
		t.Errorf("the client waited %.3f ms, less than productpage's app %.3f ms", client, got["app"])
	}
	t.Logf("client %v; %s", took, header)

	// Each service on its own says its part.
	for svc, names := range map[string][]string{
		"details": {"app"}, "ratings": {"app"}, "reviews": {"app", "ratings", "ratings.app"},
	} {
		path := map[string]string{"details": "/details/0", "ratings": "/ratings/0", "reviews": "/reviews/0"}[svc]
		h, _ := timedGet(t, s.url(svc, path))
		if g := serverTiming(t, h); len(g) != len(names) {
			t.Errorf("%s %s: Server-Timing %q, want %v", svc, path, h, names)
		}
	}
}

// SERVER_TIMING=false in every service: no header anywhere, errors included.
func TestServerTimingOffSendsNoHeader(t *testing.T) {
	s := stackNoTiming.need(t)
	for _, u := range []string{
		s.url("productpage", "/productpage"), s.url("productpage", "/nowhere"),
		s.url("details", "/details/0"), s.url("reviews", "/reviews/0"), s.url("ratings", "/ratings/0"),
	} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		resp.Body.Close()
		if h := resp.Header.Get("Server-Timing"); h != "" {
			t.Errorf("GET %s (status %d) with SERVER_TIMING=false: Server-Timing %q", u, resp.StatusCode, h)
		}
	}
}
