package latency

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"fortio.org/fortio/periodic"
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Recorder is a fortio periodic.AccessLogger that records every request of a
// run into a plain and a corrected histogram.
//
// fortio calls Report from each thread's goroutine; per-thread state needs no
// lock, and the histograms are sharded by thread (a histogram is ~190 kB, too
// big to keep one per connection at 400 connections) with one mutex per shard.
type Recorder struct {
	sched   Schedule
	threads []threadState
	shards  []shard
	also    PerRequest
}

// PerRequest is told of every request after it is recorded, from the
// request's thread (package hops keeps each request's Server-Timing split).
type PerRequest interface {
	Request(thread int, plain, corrected time.Duration)
}

// Also makes r tell p of every request; set it before the run.
func (r *Recorder) Also(p PerRequest) { r.also = p }

type threadState struct {
	start    time.Time // send time of iteration 0
	requests atomic.Int64
	errors   atomic.Int64
	_        [40]byte // keep neighbouring threads' counters off one cache line
}

type shard struct {
	mu                sync.Mutex
	plain, corrected  *hdrhistogram.Histogram
	plainSum, corrSum time.Duration
}

var _ periodic.AccessLogger = (*Recorder)(nil)

// NewRecorder returns a recorder for a fortio run of threads connections
// following sched.
func NewRecorder(sched Schedule, threads, shards int) *Recorder {
	if threads < 1 {
		threads = 1
	}
	if shards < 1 || shards > threads {
		shards = threads
	}
	r := &Recorder{sched: sched, threads: make([]threadState, threads), shards: make([]shard, shards)}
	for i := range r.shards {
		r.shards[i].plain = NewHistogram()
		r.shards[i].corrected = NewHistogram()
	}
	return r
}

// Start implements periodic.AccessLogger.
func (r *Recorder) Start(ctx context.Context, _ periodic.ThreadID, _ int64, _ time.Time) context.Context {
	return ctx
}

// Report implements periodic.AccessLogger: fortio passes the thread, the
// iteration index within the thread's schedule, the send time and the latency
// in seconds.
func (r *Recorder) Report(_ context.Context, id periodic.ThreadID, iter int64, sent time.Time, latency float64, ok bool, _ string) {
	t := &r.threads[int(id)%len(r.threads)]
	plain := time.Duration(latency * 1e9)
	corrected := plain
	if r.sched.Paced() {
		if iter == 0 {
			t.start = sent
		}
		due := t.start.Add(r.sched.Offset(iter))
		// A request is never faster than it was measured: sending a hair before
		// the due time (timer granularity) must not shorten it.
		if c := sent.Add(plain).Sub(due); c > plain {
			corrected = c
		}
	}
	s := &r.shards[int(id)%len(r.shards)]
	s.mu.Lock()
	_ = s.plain.RecordValue(Micros(plain)) // clamped to the range, cannot fail
	_ = s.corrected.RecordValue(Micros(corrected))
	s.plainSum += plain
	s.corrSum += corrected
	s.mu.Unlock()
	t.requests.Add(1)
	if !ok {
		t.errors.Add(1)
	}
	if r.also != nil {
		r.also.Request(int(id)%len(r.threads), plain, corrected)
	}
}

// Info implements periodic.AccessLogger.
func (r *Recorder) Info() string {
	return "bookload latency recorder (plain and corrected HdrHistograms)"
}

// Counts returns the requests and errors recorded so far; safe during a run.
func (r *Recorder) Counts() (requests, errors int64) {
	for i := range r.threads {
		requests += r.threads[i].requests.Load()
		errors += r.threads[i].errors.Load()
	}
	return requests, errors
}

// Distributions is what a Recorder holds after a run.
type Distributions struct {
	Plain, Corrected       *hdrhistogram.Histogram
	PlainSum, CorrectedSum time.Duration
}

// Result merges the shards. Call it after the run.
func (r *Recorder) Result() Distributions {
	d := Distributions{Plain: NewHistogram(), Corrected: NewHistogram()}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		d.Plain.Merge(s.plain)
		d.Corrected.Merge(s.corrected)
		d.PlainSum += s.plainSum
		d.CorrectedSum += s.corrSum
		s.mu.Unlock()
	}
	return d
}
