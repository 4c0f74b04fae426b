// Package engine is the seam between what load to offer and how: an Engine
// turns (scenario profile, target, repetition) into one repetition's Result.
// Every engine ends in the same Result (plain and corrected latency
// histograms, counts by status, achieved rate, metadata), so the result store,
// compare and report never care which engine ran: the fortio library
// in-process (package fortioengine) for http(s) targets, the same in a
// bookload agent (package agentengine) for bookload+http(s) targets, a fortio
// server's REST API (package fortiorest) for fortio+http(s) targets.
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Request is one repetition (or a warmup) to run.
type Request struct {
	Scenario   *scenario.Scenario
	Profile    scenario.Profile
	Target     loadtarget.Target
	Repetition int // 1-based; 0 for a warmup
	Labels     map[string]string
}

// RunLabels name the repetition in a load generator's own records (fortio's
// labels): scenario, target, profile, then rep-NN, or warmup.
func (r Request) RunLabels() []string {
	rep := "warmup"
	if r.Repetition > 0 {
		rep = fmt.Sprintf("rep-%02d", r.Repetition)
	}
	return []string{r.Scenario.Name, r.Target.Name, r.Profile.Name, rep}
}

// Live is a running repetition's progress, for a progress line.
type Live struct {
	Elapsed  time.Duration
	Requests int64 // < 0: not known before the end (a remote engine)
	Errors   int64
}

// Result is one repetition's outcome.
type Result struct {
	Engine       string
	Start        time.Time
	Duration     time.Duration
	RequestedQPS float64
	ActualQPS    float64
	Requests     int64
	Errors       int64            // requests that did not get a 2xx
	Codes        map[string]int64 // by HTTP status; "-1" is a connection/socket error (fortio's convention)
	Latency      latency.Distributions
	// Hops is where the time went, from the answers' Server-Timing headers;
	// nil when the engine does not record them.
	Hops *hops.Result
	// Interrupted is set when the context was cancelled during the run; such a
	// result is incomplete and is not kept.
	Interrupted bool
	// Native is the engine's own result document (fortio's result JSON), kept
	// as the base of the repetition file so the engine's tools can open it.
	Native json.RawMessage
	// Metadata is engine-specific detail worth recording (sockets used, ...).
	Metadata map[string]any
}

// Engine runs load.
type Engine interface {
	// Name identifies the engine in run.json.
	Name() string
	// Check sends one request to see the target answers at all, so that a
	// stack that is not up fails in a second rather than after a run of errors.
	Check(ctx context.Context, req Request) error
	// Run runs one repetition. It returns early, with Interrupted set, when ctx
	// is cancelled. live, if not nil, is called about 4 times a second.
	Run(ctx context.Context, req Request, live func(Live)) (*Result, error)
}

// LiveInterval is how often engines report progress.
const LiveInterval = 250 * time.Millisecond

// ReportLive calls live with progress() every LiveInterval until the
// returned stop is called; stop waits for the reporting goroutine, so live is
// never called once stop has returned (a caller may tear down what live
// writes to as soon as Run returns). A nil live reports nothing.
func ReportLive(live func(Live), progress func() Live) (stop func()) {
	if live == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(LiveInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				live(progress())
			}
		}
	}()
	return func() { close(done); <-finished }
}
