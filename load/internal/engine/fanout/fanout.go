// Package fanout runs one repetition on many member engines at once, one per
// namespace of a scale run (each namespace's own load client), and merges
// their results into one: counts and achieved rates summed, latency from
// the members' HdrHistograms merged (a percentile of all requests together,
// never an average of percentiles), and the spread between members (min,
// median and max of their p50, p99 and achieved rate, and the worst one) in
// the metadata.
//
// Members all run at once: the point of a scale run is every namespace
// loaded together, so there is no concurrency bound, only a bound on the
// number of members (MaxMembers).
package fanout

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// Name is the engine's name in run.json.
const Name = "fanout"

// MaxMembers bounds one fan-out: each member holds a connection to its
// load client for the whole repetition, and two decoded histograms (~190 kB
// each) for a moment when it ends.
const MaxMembers = 2000

// Merge precision values of engine_metadata["merge_precision"].
const (
	// MergeExact: every member recorded per request (bookload agents); the
	// merged histogram is the one of all requests together.
	MergeExact = "exact: every member recorded per request, histograms added bucket by bucket"
	// MergeBucketPrecise: some member reported fortio's bucket histogram
	// only; adding is exact on those buckets, so the merged percentiles are
	// as good as the buckets.
	MergeBucketPrecise = "bucket-precise: some members report fortio's bucket histograms only, added bucket by bucket"
)

// Member is one namespace's load client.
type Member struct {
	Name   string // the namespace
	Target loadtarget.Target
	Engine engine.Engine
}

// Engine fans one repetition out to its members.
type Engine struct {
	members []Member
	// Settle is how long Check keeps retrying members that fail it, once a
	// second: namespaces created a moment ago answer only once their
	// Services' rules have reached the nodes, a little after the pods are
	// Ready. 0: one try.
	Settle time.Duration
}

// New checks the members: at least one, at most MaxMembers, names unique.
func New(members []Member) (*Engine, error) {
	switch {
	case len(members) == 0:
		return nil, errors.New("fan-out: no members")
	case len(members) > MaxMembers:
		return nil, fmt.Errorf("fan-out: %d members, more than the %d one run drives (split the namespaces with a narrower selector)", len(members), MaxMembers)
	}
	seen := map[string]bool{}
	for _, m := range members {
		if m.Name == "" || m.Engine == nil {
			return nil, fmt.Errorf("fan-out: member %q without a name or an engine", m.Name)
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("fan-out: member %q given twice", m.Name)
		}
		seen[m.Name] = true
	}
	return &Engine{members: members}, nil
}

// Members returns the members.
func (e *Engine) Members() []Member { return e.members }

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

func (e *Engine) memberReq(req engine.Request, m Member) engine.Request {
	r := req
	r.Target = m.Target
	return r
}

// Check implements engine.Engine: every member's check, all at once, the
// failing ones again every second for Settle; the error names each member
// still failing then (the first ten).
func (e *Engine) Check(ctx context.Context, req engine.Request) error {
	errs := make([]error, len(e.members))
	pending := make([]bool, len(e.members))
	for i := range pending {
		pending[i] = true
	}
	deadline := time.Now().Add(e.Settle)
	for {
		var wg sync.WaitGroup
		failed := 0
		for i, m := range e.members {
			if !pending[i] {
				continue
			}
			wg.Go(func() {
				errs[i] = nil
				if err := m.Engine.Check(ctx, e.memberReq(req, m)); err != nil {
					errs[i] = fmt.Errorf("namespace %s: %w", m.Name, err)
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			pending[i] = err != nil
			if err != nil {
				failed++
			}
		}
		if failed == 0 || ctx.Err() != nil || !time.Now().Add(time.Second).Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return joinFirst(errs, 10, "members failed the check")
}

// joinFirst joins the non-nil errors, at most max of them and a count of
// the rest.
func joinFirst(errs []error, max int, what string) error {
	var bad []error
	n := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		n++
		if len(bad) < max {
			bad = append(bad, err)
		}
	}
	if n == 0 {
		return nil
	}
	if n > len(bad) {
		bad = append(bad, fmt.Errorf("... and %d more", n-len(bad)))
	}
	if n == 1 {
		return bad[0]
	}
	return fmt.Errorf("%d %s:\n%w", n, what, errors.Join(bad...))
}

// Run implements engine.Engine: every member runs the repetition at once,
// each result is merged as it arrives (so its histograms are not kept). A
// member failing fails the repetition, naming the namespace; the others
// are stopped.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	begin := time.Now()
	// Members' own progress would cost a status call per member 4 times a
	// second through the API server: elapsed time only.
	defer engine.ReportLive(live, func() engine.Live {
		return engine.Live{Elapsed: time.Since(begin), Requests: -1, Errors: -1}
	})()
	m := newMerger(len(e.members))
	errs := make([]error, len(e.members))
	var interrupted sync.Map
	var wg sync.WaitGroup
	for i, mem := range e.members {
		wg.Go(func() {
			res, err := mem.Engine.Run(mctx, e.memberReq(req, mem), nil)
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("namespace %s: %w", mem.Name, err)
				cancel()
			case res.Interrupted:
				interrupted.Store(mem.Name, true)
				cancel()
			default:
				m.add(i, mem.Name, res)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return &engine.Result{Engine: Name, Interrupted: true}, nil
	}
	if err := joinFirst(errs, 10, "namespaces failed"); err != nil {
		return nil, err
	}
	var stopped []string
	interrupted.Range(func(k, _ any) bool { stopped = append(stopped, k.(string)); return true })
	if len(stopped) > 0 {
		sort.Strings(stopped)
		return nil, fmt.Errorf("namespace %s: the member's run was stopped before its end (not by bookload)", strings.Join(stopped, ", "))
	}
	return m.result(req), nil
}

// MemberStats is one member's line in engine_metadata["namespaces"].
type MemberStats struct {
	Namespace    string  `json:"namespace"`
	Requests     int64   `json:"requests"`
	Errors       int64   `json:"errors"`
	ActualQPS    float64 `json:"actual_qps"`
	P50          float64 `json:"p50_ms"`
	P99          float64 `json:"p99_ms"`
	CorrectedP99 float64 `json:"corrected_p99_ms"`
	Engine       string  `json:"engine"`
	Precision    string  `json:"precision,omitempty"`
	order        int     // the member's place in the fan-out
}

// merger sums members' results as they arrive.
type merger struct {
	mu      sync.Mutex
	d       latency.Distributions
	res     engine.Result
	members []MemberStats
	first   bool
	// corrected is how the members measured corrected latency (their
	// engine_metadata), for the report's engine notes.
	corrected map[string]bool
}

func newMerger(n int) *merger {
	return &merger{
		d:         latency.Distributions{Plain: latency.NewHistogram(), Corrected: latency.NewHistogram()},
		res:       engine.Result{Engine: Name, Codes: map[string]int64{}},
		members:   make([]MemberStats, 0, n),
		first:     true,
		corrected: map[string]bool{},
	}
}

// add merges one member's result; the member's histograms are dropped
// after this.
func (m *merger) add(order int, name string, r *engine.Result) {
	ms := MemberStats{order: order, Namespace: name, Requests: r.Requests, Errors: r.Errors, ActualQPS: r.ActualQPS, Engine: r.Engine}
	if p, ok := r.Metadata["precision"].(string); ok {
		ms.Precision = p
	}
	if r.Latency.Plain != nil {
		s := latency.Summarize(r.Latency.Plain, r.Latency.PlainSum)
		ms.P50, ms.P99 = s.P50, s.P99
	}
	if r.Latency.Corrected != nil {
		ms.CorrectedP99 = latency.Summarize(r.Latency.Corrected, r.Latency.CorrectedSum).P99
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := r.Metadata["corrected_latency"].(string); ok {
		m.corrected[c] = true
	}
	if r.Latency.Plain != nil {
		m.d.Plain.Merge(r.Latency.Plain)
		m.d.PlainSum += r.Latency.PlainSum
	}
	if r.Latency.Corrected != nil {
		m.d.Corrected.Merge(r.Latency.Corrected)
		m.d.CorrectedSum += r.Latency.CorrectedSum
	}
	if m.first || r.Start.Before(m.res.Start) {
		m.res.Start = r.Start
	}
	m.first = false
	m.res.Duration = max(m.res.Duration, r.Duration)
	m.res.RequestedQPS += r.RequestedQPS
	m.res.ActualQPS += r.ActualQPS
	m.res.Requests += r.Requests
	m.res.Errors += r.Errors
	for c, n := range r.Codes {
		m.res.Codes[c] += n
	}
	m.members = append(m.members, ms)
}

// result is the merged repetition.
func (m *merger) result(req engine.Request) *engine.Result {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.res
	out.Latency = m.d
	sort.Slice(m.members, func(i, j int) bool { return m.members[i].order < m.members[j].order })
	// "precision" keeps the members' own values, which compare reads.
	precision, merge, engines := "per-request", MergeExact, map[string]int{}
	for _, ms := range m.members {
		engines[ms.Engine]++
		if ms.Precision != "" && ms.Precision != "per-request" { // "": the in-process engine, per request
			precision, merge = ms.Precision, MergeBucketPrecise
		}
	}
	out.Metadata = map[string]any{
		"members":         len(m.members),
		"member_engines":  engines,
		"per_member_qps":  req.Profile.QPS,
		"precision":       precision,
		"merge_precision": merge,
		"merge":           "HdrHistograms of every member added bucket by bucket (plain and corrected); counts, codes and achieved rates summed; never an average of percentiles",
		"spread":          Spread(m.members),
		"namespaces":      m.members,
	}
	if len(m.corrected) > 0 {
		ways := make([]string, 0, len(m.corrected))
		for c := range m.corrected {
			ways = append(ways, c)
		}
		sort.Strings(ways)
		out.Metadata["corrected_latency"] = "in each namespace's client: " + strings.Join(ways, "; ")
	}
	return &out
}
