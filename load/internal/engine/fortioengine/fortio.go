// Package fortioengine drives load with the fortio library in-process:
// fhttp.RunHTTPTest with periodic.RunnerOptions, i.e. fortio's own rate
// controller, connection handling and fast HTTP/1.1 client. bookload only adds
// an AccessLogger that records every request into its own histograms (see
// package latency) and an Aborter wired to the caller's context.
package fortioengine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/fnet"
	"fortio.org/fortio/periodic"
	flog "fortio.org/log"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
)

// Name is the engine's name in run.json.
const Name = "fortio"

// Engine is the in-process fortio engine. The zero value is ready to use.
type Engine struct {
	// NoRecorder leaves out bookload's per-request recording (fortio's own
	// 1 ms-bucket histogram only); for measuring what recording costs.
	NoRecorder bool
	// Out receives fortio's own text report; nil discards it.
	Out io.Writer
	// Started, if not nil, is called with the run's final options (its
	// Aborter set) just before the run starts, and the func it returns once
	// the run has ended. The agent lists its runs in fortio's REST status
	// with it, so that /fortio/rest/status shows them and /fortio/rest/stop
	// stops them as it does fortio's own runs.
	Started func(o *fhttp.HTTPRunnerOptions) (ended func())
}

var quietOnce sync.Once

// quiet turns fortio's logger down to critical: at info level it prints a few
// lines per run, and at error level one per failed connection, which would
// bury the progress line. Errors are counted in the results instead.
func quiet() {
	quietOnce.Do(func() { flog.SetLogLevelQuiet(flog.Critical) })
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

// Options returns the fortio options for one run of req: the profile's rate,
// connections and duration, the scenario's headers, keep-alive and timeout.
// Exposed so that tests and benchmarks can compare with a bare fortio run.
func Options(req engine.Request) (*fhttp.HTTPRunnerOptions, error) {
	s, p := req.Scenario, req.Profile
	o := &fhttp.HTTPRunnerOptions{}
	o.URL = req.Target.RequestURL(s.Path)
	o.QPS = p.QPS
	o.NumThreads = p.Connections
	o.Duration = p.Duration.Std()
	o.Out = io.Discard
	o.Percentiles = []float64{50, 75, 90, 99, 99.9}
	// fortio's own histogram (kept in the fortio-compatible JSON) at 0.1 ms
	// rather than 1 ms; our HdrHistograms are the precise ones.
	o.RunnerOptions.Resolution = 0.0001
	o.DisableKeepAlive = !s.KeepAlive
	// fortio's default starts every connection's request of a period at the
	// same instant; Uniform staggers connection k by k/qps (fortio -uniform).
	// The recorder's schedule still holds: each connection's start is taken
	// as the send time of its own iteration 0, after that delay.
	o.RunnerOptions.Uniform = s.Uniform
	o.HTTPReqTimeOut = s.Timeout.Std()
	if s.Payload > 0 {
		o.Payload = fnet.GenerateRandomPayload(s.Payload)
	}
	// fortio's fast client speaks HTTP/1.1 only; H2 goes through Go's
	// client (h2c for http://), one client and so one connection per thread.
	o.H2 = s.H2
	o.DisableFastClient = s.H2
	// Errors are data: a server answering 503 on the first call must not abort
	// the repetition, its errors are counted and reported.
	o.AllowInitialErrors = true
	o.Labels = labels(req)
	for _, h := range s.Headers {
		if err := o.AddAndValidateExtraHeader(h.Name + ": " + h.Value); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func labels(req engine.Request) string {
	parts := req.RunLabels()
	keys := make([]string, 0, len(req.Labels))
	for k := range req.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+req.Labels[k])
	}
	return strings.Join(parts, " ")
}

// Check implements engine.Engine: one GET, any HTTP answer will do.
func (e *Engine) Check(ctx context.Context, req engine.Request) error {
	return engine.CheckHTTP(ctx, req)
}

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	quiet()
	o, err := Options(req)
	if err != nil {
		return nil, err
	}
	if e.Out != nil {
		o.Out = e.Out
	}
	var rec *latency.Recorder
	var hopRec *hops.Recorder
	if !e.NoRecorder {
		sched := latency.NewSchedule(o.QPS, o.NumThreads, o.Duration)
		rec = latency.NewRecorder(sched, o.NumThreads, 4*runtime.GOMAXPROCS(0))
		o.AccessLogger = rec
		// Server-Timing needs the response head: fortio's fast client hands
		// it to DataWriter (http only; https goes through Go's client,
		// which hands over the body alone). Sequential warm-up tells the
		// recorder which connection is which (package hops).
		if strings.HasPrefix(o.URL, "http://") && !o.DisableFastClient {
			hopRec = hops.NewRecorder(o.NumThreads)
			rec.Also(hopRec)
			o.DataWriter = hopRec.Writer()
			o.SequentialWarmup = true
		}
	}
	// Our own Aborter: fortio then installs no SIGINT handler of its own, and
	// cancelling ctx stops the periodic runner between two requests.
	aborter := periodic.NewAborter()
	o.Stop = aborter
	stop := context.AfterFunc(ctx, func() { aborter.Abort(false) })
	defer stop()
	if e.Started != nil {
		defer e.Started(o)()
	}
	start := time.Now()
	if rec != nil {
		// live is never called once Run has returned: the caller may have
		// torn down what live writes to (the agent's run info).
		defer engine.ReportLive(live, func() engine.Live {
			n, errs := rec.Counts()
			return engine.Live{Elapsed: time.Since(start), Requests: n, Errors: errs}
		})()
	}
	res, err := fhttp.RunHTTPTest(o)
	if err != nil {
		if ctx.Err() != nil {
			return &engine.Result{Engine: Name, Interrupted: true}, nil
		}
		return nil, fmt.Errorf("fortio: %w", err)
	}
	native, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("fortio result: %w", err)
	}
	out := &engine.Result{
		Engine:       Name,
		Start:        res.StartTime,
		Duration:     res.ActualDuration,
		RequestedQPS: o.QPS,
		ActualQPS:    res.ActualQPS,
		Requests:     res.DurationHistogram.Count,
		Errors:       res.ErrorsDurationHistogram.Count,
		Codes:        map[string]int64{},
		Interrupted:  ctx.Err() != nil,
		Native:       native,
		Metadata: map[string]any{
			"fortio_id":    res.RunnerResults.ID,
			"sockets_used": res.SocketCount,
			"connections":  res.NumThreads,
			"url":          o.URL,
			// What crossed the connections, for throughput: the answers as
			// fortio counts them (head and body on its fast client, the body
			// on Go's client, which h2 takes) and the request bodies.
			"bytes_received": int64(res.Sizes.Sum),
			"bytes_sent":     int64(len(o.Payload)) * res.DurationHistogram.Count,
		},
	}
	for code, n := range res.RetCodes {
		out.Codes[strconv.Itoa(code)] = n
	}
	if rec != nil {
		out.Latency = rec.Result()
	}
	if hopRec != nil {
		out.Hops = hopRec.Result()
	}
	return out, nil
}
