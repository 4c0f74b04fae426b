package fanout

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// fixed is a member engine returning a prepared result.
type fixed struct {
	res *engine.Result
	err error
}

func (f *fixed) Name() string                                { return "fixed" }
func (f *fixed) Check(context.Context, engine.Request) error { return f.err }
func (f *fixed) Run(ctx context.Context, _ engine.Request, _ func(engine.Live)) (*engine.Result, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.res, nil
}

// blocking runs until cancelled.
type blocking struct{}

func (blocking) Name() string                                { return "blocking" }
func (blocking) Check(context.Context, engine.Request) error { return nil }
func (blocking) Run(ctx context.Context, _ engine.Request, _ func(engine.Live)) (*engine.Result, error) {
	<-ctx.Done()
	return &engine.Result{Interrupted: true}, nil
}

func request() engine.Request {
	s := &scenario.Scenario{Name: "scale-test", Service: "ratings", Path: "/ratings/0", Repetitions: 1,
		Profiles: []scenario.Profile{{Name: "p", QPS: 10, Connections: 2, Duration: scenario.Duration(time.Second)}}}
	return engine.Request{Scenario: s, Profile: s.Profiles[0], Repetition: 1}
}

// TestMergeEqualsOneHistogram: known samples recorded into K per-member
// histograms and into one; the merged result has every count, sum and
// percentile of the one histogram, plain and corrected.
func TestMergeEqualsOneHistogram(t *testing.T) {
	const k = 7
	rng := rand.New(rand.NewPCG(3, 4))
	allPlain, allCorr := latency.NewHistogram(), latency.NewHistogram()
	var plainSum, corrSum time.Duration
	var members []Member
	for i := range k {
		d := latency.Distributions{Plain: latency.NewHistogram(), Corrected: latency.NewHistogram()}
		// each member its own latency level and spread, some with a tail
		n := 500 + 300*i
		for range n {
			p := time.Duration(float64(time.Millisecond) * (1 + float64(i)) * (0.5 + rng.ExpFloat64()))
			c := p
			if rng.IntN(20) == 0 {
				c += time.Duration(rng.IntN(400)) * time.Millisecond
			}
			for _, h := range []struct {
				h   *hdrhistogram.Histogram
				v   time.Duration
				sum *time.Duration
			}{{d.Plain, p, &d.PlainSum}, {d.Corrected, c, &d.CorrectedSum}, {allPlain, p, &plainSum}, {allCorr, c, &corrSum}} {
				if err := h.h.RecordValue(latency.Micros(h.v)); err != nil {
					t.Fatal(err)
				}
				*h.sum += h.v
			}
		}
		res := &engine.Result{Engine: "bookload-agent", Requests: int64(n), Errors: int64(i), ActualQPS: 10 - float64(i)/10,
			RequestedQPS: 10, Duration: time.Second, Start: time.Unix(int64(1000+i), 0),
			Codes: map[string]int64{"200": int64(n - i), "503": int64(i)}, Latency: d, Metadata: map[string]any{"precision": "per-request"}}
		members = append(members, Member{Name: "scale-" + string(rune('a'+i)), Engine: &fixed{res: res}})
	}
	e, err := New(members)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Run(context.Background(), request(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		got, all *hdrhistogram.Histogram
		gs, as   time.Duration
	}{{"plain", got.Latency.Plain, allPlain, got.Latency.PlainSum, plainSum}, {"corrected", got.Latency.Corrected, allCorr, got.Latency.CorrectedSum, corrSum}} {
		if !c.got.Equals(c.all) {
			t.Errorf("%s: merged histogram differs from the one of all samples", c.name)
		}
		if c.got.TotalCount() != c.all.TotalCount() || c.gs != c.as {
			t.Errorf("%s: count %d sum %v, want %d %v", c.name, c.got.TotalCount(), c.gs, c.all.TotalCount(), c.as)
		}
		for p := 0.0; p <= 100; p += 0.1 {
			if a, b := c.got.ValueAtQuantile(p), c.all.ValueAtQuantile(p); a != b {
				t.Fatalf("%s p%.1f: merged %d µs, all %d µs", c.name, p, a, b)
			}
		}
		if a, b := latency.Summarize(c.got, c.gs), latency.Summarize(c.all, c.as); a != b {
			t.Errorf("%s summary %+v, want %+v", c.name, a, b)
		}
	}
	var wantReq int64
	for i := range k {
		wantReq += int64(500 + 300*i)
	}
	if got.Requests != wantReq || got.Errors != 21 || got.Codes["503"] != 21 || got.Codes["200"] != wantReq-21 {
		t.Errorf("counts %d %d %v", got.Requests, got.Errors, got.Codes)
	}
	if got.RequestedQPS != 70 || got.ActualQPS < 67.89 || got.ActualQPS > 67.91 || !got.Start.Equal(time.Unix(1000, 0)) {
		t.Errorf("qps %v/%v start %v", got.ActualQPS, got.RequestedQPS, got.Start)
	}
	sp := got.Metadata["spread"].(SpreadStats)
	if sp.P99.Worst != "scale-g" || sp.ActualQPS.Worst != "scale-g" || sp.ActualQPS.Max != 10 || sp.MostErrors != "scale-g" {
		t.Errorf("spread %+v: want scale-g worst", sp)
	}
	if sp.P50.Min >= sp.P50.Median || sp.P50.Median >= sp.P50.Max {
		t.Errorf("p50 spread %+v not ordered", sp.P50)
	}
	if got.Metadata["merge_precision"] != MergeExact || got.Metadata["precision"] != "per-request" {
		t.Errorf("precision %v / %v", got.Metadata["precision"], got.Metadata["merge_precision"])
	}
	// One member with fortio's buckets makes the merge bucket-precise, and
	// compare's precision note still finds it.
	members[2].Engine.(*fixed).res.Metadata = map[string]any{"precision": "fortio-buckets"}
	got, err = e.Run(context.Background(), request(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata["merge_precision"] != MergeBucketPrecise || got.Metadata["precision"] != "fortio-buckets" {
		t.Errorf("with a fortio member: precision %v / %v", got.Metadata["precision"], got.Metadata["merge_precision"])
	}
}

func TestMembersBoundsAndFailures(t *testing.T) {
	if _, err := New(nil); err == nil || !strings.Contains(err.Error(), "no members") {
		t.Errorf("no members: %v", err)
	}
	many := make([]Member, MaxMembers+1)
	for i := range many {
		many[i] = Member{Name: "ns-" + string(rune(i)), Engine: blocking{}}
	}
	if _, err := New(many); err == nil || !strings.Contains(err.Error(), "2001 members, more than the 2000") {
		t.Errorf("too many: %v", err)
	}
	if _, err := New([]Member{{Name: "a", Engine: blocking{}}, {Name: "a", Engine: blocking{}}}); err == nil || !strings.Contains(err.Error(), `"a" given twice`) {
		t.Errorf("twice: %v", err)
	}
	// One member failing fails the repetition, naming it, and stops the others.
	e, _ := New([]Member{{Name: "scale-1", Engine: blocking{}}, {Name: "scale-2", Engine: &fixed{err: errors.New("HTTP 500: load failed")}}, {Name: "scale-3", Engine: blocking{}}})
	done := make(chan struct{})
	var err error
	go func() { _, err = e.Run(context.Background(), request(), nil); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a failing member did not stop the others")
	}
	if err == nil || !strings.Contains(err.Error(), "namespace scale-2: HTTP 500") {
		t.Errorf("failing member: %v", err)
	}
	if err := e.Check(context.Background(), request()); err == nil || !strings.Contains(err.Error(), "namespace scale-2") {
		t.Errorf("check: %v", err)
	}
	// Cancelled: an interrupted result, no error.
	e, _ = New([]Member{{Name: "scale-1", Engine: blocking{}}, {Name: "scale-2", Engine: blocking{}}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := e.Run(ctx, request(), nil)
	if err != nil || !res.Interrupted {
		t.Errorf("cancelled: %+v %v", res, err)
	}
}

// settling fails its first checks, then passes.
type settling struct {
	fixed
	failures atomic.Int32
}

func (s *settling) Check(context.Context, engine.Request) error {
	if s.failures.Add(-1) >= 0 {
		return errors.New("connection refused")
	}
	return nil
}

// A member that cannot reach its app yet gets Settle to get there; one that
// never does fails the check once Settle is over, named.
func TestCheckSettles(t *testing.T) {
	late := &settling{}
	late.failures.Store(2)
	e, _ := New([]Member{{Name: "scale-1", Engine: &fixed{}}, {Name: "scale-2", Engine: late}})
	e.Settle = 10 * time.Second
	if err := e.Check(context.Background(), request()); err != nil {
		t.Errorf("a member that answers on its third check, within Settle: %v", err)
	}
	late.failures.Store(2)
	e.Settle = 0
	if err := e.Check(context.Background(), request()); err == nil || !strings.Contains(err.Error(), "namespace scale-2: connection refused") {
		t.Errorf("without Settle, one try: %v", err)
	}
	never := &settling{}
	never.failures.Store(1 << 20)
	e, _ = New([]Member{{Name: "scale-1", Engine: &fixed{}}, {Name: "scale-3", Engine: never}})
	e.Settle = 2 * time.Second
	start := time.Now()
	err := e.Check(context.Background(), request())
	if err == nil || !strings.Contains(err.Error(), "namespace scale-3") {
		t.Errorf("a member that never answers: %v", err)
	}
	if n := 1<<20 - never.failures.Load(); n < 2 || n > 4 || time.Since(start) > 5*time.Second {
		t.Errorf("a member that never answers was checked %d times in %v with a 2 s Settle, want 2-3 about a second apart", n, time.Since(start))
	}
}
