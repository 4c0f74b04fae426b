// Package delayproxy is a stand-in whose cost is known: an HTTP reverse proxy
// that holds each request for a set delay before passing it on. Two of them
// in front of one server, set 0.2 and 0.5 ms apart, make a difference of
// 0.3 ms plus whatever their own delays missed by, which each proxy measures
// and reports: the known answer a comparison must find before it is trusted
// on a mesh.
//
// The delay is a busy wait: a Go sleep under a millisecond ends on the
// runtime's next poll, about 1.1 ms here when the process is idle, so 0.2 ms
// and 0.5 ms sleeps would both be ~1.1. Spinning costs the delay in CPU
// (at 100 requests per second and 0.5 ms, 5% of a core).
package delayproxy

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"runtime"
	"sync/atomic"
	"time"
)

// Proxy holds every request for Delay, then proxies it to its upstream.
type Proxy struct {
	Delay time.Duration
	rp    *httputil.ReverseProxy
	held  atomic.Int64 // requests
	sum   atomic.Int64 // ns actually held
}

// New is a proxy to upstream (scheme and host; the request's path is kept)
// that keeps up to conns connections to it alive.
func New(upstream *url.URL, delay time.Duration, conns int) *Proxy {
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport = &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}
	return &Proxy{Delay: delay, rp: rp}
}

// ServeHTTP waits Delay (busy), then proxies.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	for time.Since(start) < p.Delay {
		runtime.Gosched() // the wait yields to the proxying of others
	}
	p.held.Add(1)
	p.sum.Add(int64(time.Since(start)))
	p.rp.ServeHTTP(w, r)
}

// Held is how many requests were held and for how long on average.
func (p *Proxy) Held() (n int64, mean time.Duration) {
	n = p.held.Load()
	if n == 0 {
		return 0, 0
	}
	return n, time.Duration(p.sum.Load() / n)
}
