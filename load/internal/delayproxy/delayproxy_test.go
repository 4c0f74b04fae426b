package delayproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// Requests pass through with their path, headers and answer; each is held
// for at least the delay, and the proxy says for how long it held them.
func TestProxyHoldsThenPasses(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server-Timing", "app;dur=0.1")
		_, _ = io.WriteString(w, r.URL.Path)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	p := New(u, 300*time.Microsecond, 2)
	front := httptest.NewServer(p)
	defer front.Close()
	for range 20 {
		res, err := http.Get(front.URL + "/details/0")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(body) != "/details/0" || res.Header.Get("Server-Timing") != "app;dur=0.1" {
			t.Fatalf("answer %q, Server-Timing %q", body, res.Header.Get("Server-Timing"))
		}
	}
	n, mean := p.Held()
	if n != 20 || mean < 300*time.Microsecond || mean > 2*time.Millisecond {
		t.Errorf("held %d requests for %v on average, want 20 for about 300µs", n, mean)
	}
}
