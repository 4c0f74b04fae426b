package e2e

import (
	"strings"
	"testing"
	"time"
)

// The page degrades, never fails: each backend stopped in turn, within the
// contract's timeouts (a refused connection is immediate; even a timed-out
// reviews call is bounded by two 3 s attempts).
func TestPageDegradesAsBackendsStop(t *testing.T) {
	st := stackDegrade.need(t)
	steps := []struct {
		stop string
		want []string
	}{
		{"ratings", []string{"Ratings service is currently unavailable", "Book Details", "Book Reviews"}},
		{"details", []string{"Error fetching product details", "Book Reviews"}},
		{"reviews", []string{"Error fetching product reviews", "Sorry, product reviews are currently unavailable for this book."}},
	}
	for _, step := range steps {
		st.stop(t, step.stop, 20*time.Second)
		start := time.Now()
		code, page := get(t, client, st.url("productpage", "/productpage"))
		took := time.Since(start)
		if code != 200 {
			t.Errorf("with %s stopped: /productpage = %d, want 200", step.stop, code)
		}
		for _, w := range step.want {
			if !strings.Contains(page, w) {
				t.Errorf("with %s stopped: page lacks %q", step.stop, w)
			}
		}
		if took > 7*time.Second {
			t.Errorf("with %s stopped: page took %v, beyond the contract's timeouts", step.stop, took)
		}
	}
	code, _ := get(t, client, st.url("productpage", "/api/v1/products/0"))
	if code != 500 {
		t.Errorf("details API with details stopped = %d, want 500 (no response)", code)
	}
}
