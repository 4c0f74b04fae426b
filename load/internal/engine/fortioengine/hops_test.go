package fortioengine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Each request's Server-Timing must be paired with that request's own
// latency, not another connection's: the server holds each answer a random
// 0-20 ms and says so in app;dur, so a pairing gone wrong shows as a
// server time longer than the latency the client measured (a residual
// clamped to 0), which a right pairing can never give.
func TestHopsArePairedWithTheirRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		held := time.Duration(rand.IntN(20_000)) * time.Microsecond
		time.Sleep(held)
		w.Header().Set("Server-Timing", fmt.Sprintf("app;dur=%.3f, down;dur=0.500, down.app;dur=0.200", float64(held)/1e6))
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	res, err := (&Engine{}).Run(context.Background(), request(srv.URL, 200, 8, 2*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hops
	if h == nil || h.Requests != res.Requests || h.Requests < 100 {
		t.Fatalf("hops recorded %+v for %d requests", h, res.Requests)
	}
	if min := h.Residuals["client"].Min(); min < 1 {
		t.Errorf("a request's app;dur exceeded its own latency (client residual min %d µs): pairing is wrong", min)
	}
	if got := h.Residuals["down"].Mean(); got < 290 || got > 310 {
		t.Errorf("down's residual mean %.0f µs, want 300 (0.5 ms wait - 0.2 ms server)", got)
	}
	for _, name := range []string{"app", "down", "down.app"} {
		if h.Metrics[name] == nil || h.Metrics[name].TotalCount() != h.Requests {
			t.Errorf("metric %s not recorded for every request", name)
		}
	}
}
