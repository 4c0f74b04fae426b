// Package enginetest holds checks shared by the engines' tests.
package enginetest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// MedianArrivalGap starts a server that records when each request arrives,
// calls load with its URL, and returns the median time between consecutive
// arrivals: near zero when the load generator sends its connections'
// requests in bursts, about 1/qps when it spreads them (uniform arrival).
func MedianArrivalGap(load func(url string)) time.Duration {
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	load(srv.URL)
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) < 2 {
		return 0
	}
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	gaps := make([]time.Duration, 0, len(arrivals)-1)
	for i := 1; i < len(arrivals); i++ {
		gaps = append(gaps, arrivals[i].Sub(arrivals[i-1]))
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}
