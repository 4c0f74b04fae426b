// Package fortiorest runs load from a fortio server somewhere else, typically
// the `fortio` Deployment inside a cluster reached through a port-forward,
// through fortio's REST API: /fortio/rest/run with async=on and save=on,
// /fortio/rest/status until the run is gone, then the result JSON from the
// server's data directory (/fortio/data/<id>.json); /fortio/rest/stop on
// Ctrl-C.
//
// Target URL grammar (see load/README.md, "In a cluster"):
//
//	fortio+http://HOST:PORT[/UI_PATH][?url=IN_CLUSTER_BASE_URL]
//	fortio+https://...
//
// HOST:PORT is the fortio server as bookload reaches it (e.g. a port-forward
// on 127.0.0.1:8080); UI_PATH is fortio's UI prefix, default /fortio/. The
// fortio server loads IN_CLUSTER_BASE_URL followed by the scenario's path;
// the default base is http://<scenario service>:9080, the Service of that name
// in fortio's own namespace.
//
// Precision: the remote fortio reports only its bucket histogram, no
// per-request times. The engine asks for 0.1 ms buckets (see Resolution) and
// rebuilds the HdrHistogram from them (FromFortio); count, average, minimum
// and maximum are exact, percentiles are bucket-limited. Latency corrected for
// coordinated omission cannot be computed without send times: it is stored
// equal to the plain latency. Both facts are in each repetition's
// engine_metadata ("precision", "corrected_latency"), and compare prints a
// note for such rows.
package fortiorest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"fortio.org/fortio/stats"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// Name is the engine's name in run.json.
const Name = "fortio-rest"

// Precision values in engine_metadata["precision"].
const (
	// PrecisionBuckets: latencies rebuilt from fortio's bucket histogram.
	PrecisionBuckets = "fortio-buckets"
	// CorrectedEqualsPlain is engine_metadata["corrected_latency"].
	CorrectedEqualsPlain = "not measured (the remote fortio reports no per-request send times): equal to plain"
)

// Remote is a parsed fortio+http(s) target URL.
type Remote struct {
	// API is fortio's UI base, ending in "/": http://127.0.0.1:8080/fortio/.
	API string
	// Base is the in-cluster base URL given with ?url=, "" for the default.
	Base string
}

// ParseURL reads a fortio+http(s) target URL.
func ParseURL(raw string) (Remote, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Remote{}, fmt.Errorf("fortio target URL %q: %w", raw, err)
	}
	scheme, ok := strings.CutPrefix(u.Scheme, "fortio+")
	if !ok || (scheme != "http" && scheme != "https") {
		return Remote{}, fmt.Errorf("fortio target URL %q: scheme must be fortio+http or fortio+https", raw)
	}
	if u.Host == "" {
		return Remote{}, fmt.Errorf("fortio target URL %q: no fortio host, e.g. fortio+http://127.0.0.1:8080", raw)
	}
	if u.Fragment != "" || u.User != nil {
		return Remote{}, fmt.Errorf("fortio target URL %q: no user or fragment allowed", raw)
	}
	path := u.Path
	if path == "" || path == "/" {
		path = "/fortio/"
	}
	if !strings.HasSuffix(path, "/") {
		path += "/"
	}
	r := Remote{API: (&url.URL{Scheme: scheme, Host: u.Host, Path: path}).String()}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Remote{}, fmt.Errorf("fortio target URL %q: query: %w", raw, err)
	}
	for k, v := range q {
		if k != "url" || len(v) != 1 {
			return Remote{}, fmt.Errorf("fortio target URL %q: the only query parameter is url=IN_CLUSTER_BASE_URL, once", raw)
		}
		b, err := url.Parse(v[0])
		if err != nil || (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" || b.RawQuery != "" || b.Fragment != "" {
			return Remote{}, fmt.Errorf("fortio target URL %q: url=%q must be an http(s) base URL with a host and no query, e.g. url=http://details.bookinfo-ambient:9080", raw, v[0])
		}
		r.Base = strings.TrimRight(v[0], "/")
	}
	return r, nil
}

// LoadURL is the URL the remote fortio loads for a scenario.
func (r Remote) LoadURL(service, path string) string {
	base := r.Base
	if base == "" {
		base = loadtarget.InClusterBase(service)
	}
	return base + path
}

// Engine drives one fortio server.
type Engine struct {
	Remote Remote
	// Poll is the status polling interval; 0 means 250 ms.
	Poll time.Duration
	// Client makes the REST calls; nil means a plain http.Client.
	Client *http.Client
}

// New returns the engine for a fortio+http(s) target.
func New(t loadtarget.Target) (*Engine, error) {
	r, err := ParseURL(t.URL)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	return &Engine{Remote: r}, nil
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

func (e *Engine) client() *http.Client {
	if e.Client != nil {
		return e.Client
	}
	return http.DefaultClient
}

// params are fortio's REST run parameters for req.
func (e *Engine) params(req engine.Request) url.Values {
	s, p := req.Scenario, req.Profile
	q := url.Values{}
	q.Set("url", e.Remote.LoadURL(s.Service, s.Path))
	q.Set("qps", strconv.FormatFloat(p.QPS, 'g', -1, 64))
	q.Set("c", strconv.Itoa(p.Connections))
	q.Set("t", p.Duration.Std().String())
	q.Set("timeout", s.Timeout.Std().String())
	q.Set("r", strconv.FormatFloat(Resolution, 'g', -1, 64))
	q.Set("p", "50,75,90,99,99.9")
	q.Set("labels", labels(req))
	if s.Uniform {
		// fortio's REST API reads the form's checkbox value.
		q.Set("uniform", "on")
	}
	for _, h := range s.Headers {
		q.Add("H", h.Name+": "+h.Value)
	}
	if !s.KeepAlive {
		// The REST API has no keep-alive switch: send Connection: close and
		// open a new connection for every request (connection-reuse=1).
		q.Add("H", "Connection: close")
		q.Set("connection-reuse", "1")
	}
	return q
}

func labels(req engine.Request) string {
	return strings.Join(req.RunLabels(), " ")
}

// reply is what bookload reads of fortio's REST replies and result JSON.
type reply struct {
	Error     bool   `json:"error"`
	Message   string `json:"message"`
	Exception string `json:"exception"`
	// rest/run with async=on
	RunID    int64
	ResultID string
	// rest/status
	Statuses map[string]json.RawMessage
	// a result (fhttp.HTTPRunnerResults)
	ID                      string
	URL                     string
	Version                 string
	StartTime               time.Time
	ActualQPS               float64
	ActualDuration          time.Duration
	NumThreads              int
	DurationHistogram       *stats.HistogramData
	ErrorsDurationHistogram *stats.HistogramData
	RetCodes                map[int]int64
	SocketCount             int64
}

func (r *reply) err() error {
	if !r.Error {
		return nil
	}
	msg := r.Message
	if r.Exception != "" {
		msg += ": " + r.Exception
	}
	return errors.New(msg)
}

// errNotFound is a 404 from fortio.
var errNotFound = errors.New("not found")

// call GETs fortio's path with q and decodes the JSON reply into out (raw, if
// not nil, receives the body).
func (e *Engine) call(ctx context.Context, timeout time.Duration, path string, q url.Values, out *reply, raw *[]byte) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := e.Remote.API + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := e.client().Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusNotFound {
		return errNotFound
	}
	if jerr := json.Unmarshal(body, out); jerr != nil {
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return fmt.Errorf("not a fortio reply (%w): %.80q", jerr, body)
	}
	if err := out.err(); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if raw != nil {
		*raw = body
	}
	return nil
}

// apiTimeout bounds the REST calls that do not wait for load.
const apiTimeout = 10 * time.Second

// Check implements engine.Engine: fortio must answer, run nothing else, and
// one request from it to the in-cluster URL must get an HTTP answer.
func (e *Engine) Check(ctx context.Context, req engine.Request) error {
	var st reply
	if err := e.call(ctx, apiTimeout, "rest/status", nil, &st, nil); err != nil {
		return fmt.Errorf("target %s: fortio does not answer at %s (%w); is the port-forward running? "+
			"e.g. kubectl -n bookinfo-ambient port-forward svc/fortio 8080:8080", req.Target.Name, e.Remote.API, err)
	}
	if len(st.Statuses) > 0 {
		ids := make([]string, 0, len(st.Statuses))
		for id := range st.Statuses {
			ids = append(ids, id)
		}
		return fmt.Errorf("target %s: fortio at %s is already running load (run %s), which would skew the measurement: "+
			"wait for it or stop it (curl '%srest/stop')", req.Target.Name, e.Remote.API, strings.Join(ids, ", "), e.Remote.API)
	}
	q := e.params(req)
	q.Set("n", "1")
	q.Set("c", "1")
	q.Set("qps", "-1")
	q.Del("t")
	q.Set("labels", "bookload check "+req.Target.Name)
	var res reply
	load := q.Get("url")
	if err := e.call(ctx, 2*req.Scenario.Timeout.Std()+apiTimeout, "rest/run", q, &res, nil); err != nil {
		return fmt.Errorf("target %s: fortio at %s cannot load %s: %w", req.Target.Name, e.Remote.API, load, err)
	}
	if len(res.RetCodes) == 0 || res.RetCodes[-1] == sum(res.RetCodes) {
		return fmt.Errorf("target %s: %s does not answer inside the cluster (fortio at %s got no HTTP response); "+
			"is the scenario's service %q deployed in fortio's namespace? (or give ?url=BASE)", req.Target.Name, load, e.Remote.API, req.Scenario.Service)
	}
	return nil
}

func sum(m map[int]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	q := e.params(req)
	q.Set("async", "on")
	q.Set("save", "on")
	var started reply
	if err := e.call(ctx, apiTimeout, "rest/run", q, &started, nil); err != nil {
		if ctx.Err() != nil {
			return &engine.Result{Engine: Name, Interrupted: true}, nil
		}
		return nil, fmt.Errorf("fortio at %s: starting the run: %w", e.Remote.API, err)
	}
	if started.RunID == 0 || started.ResultID == "" {
		return nil, fmt.Errorf("fortio at %s: start reply without a run id or result id", e.Remote.API)
	}
	runID := strconv.FormatInt(started.RunID, 10)
	begin := time.Now()
	// fortio stops sending at the duration, then waits for the requests in
	// flight (each bounded by the timeout).
	deadline := begin.Add(req.Profile.Duration.Std() + 2*req.Scenario.Timeout.Std() + 30*time.Second)
	poll := e.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	failures := 0
	for running := true; running; {
		select {
		case <-ctx.Done():
			e.stop(runID, req.Scenario.Timeout.Std())
			return &engine.Result{Engine: Name, Interrupted: true}, nil
		case <-tick.C:
		}
		if live != nil {
			live(engine.Live{Elapsed: time.Since(begin), Requests: -1, Errors: -1})
		}
		var st reply
		err := e.call(ctx, apiTimeout, "rest/status", url.Values{"runid": {runID}}, &st, nil)
		switch {
		case err != nil && ctx.Err() != nil:
			continue // the select above stops the run
		case err != nil:
			if failures++; failures >= 3 {
				return nil, fmt.Errorf("fortio at %s: status of run %s: %w (did the port-forward or the fortio pod go away?)", e.Remote.API, runID, err)
			}
			continue
		}
		failures = 0
		_, running = st.Statuses[runID]
		if running && time.Now().After(deadline) {
			e.stop(runID, req.Scenario.Timeout.Std())
			return nil, fmt.Errorf("fortio at %s: run %s still running %v after it should have ended; stopped it", e.Remote.API, runID, time.Since(begin).Round(time.Second))
		}
	}

	var res reply
	var native []byte
	err := e.call(ctx, apiTimeout, "data/"+url.PathEscape(started.ResultID)+".json", nil, &res, &native)
	switch {
	case err != nil && ctx.Err() != nil:
		return &engine.Result{Engine: Name, Interrupted: true}, nil
	case errors.Is(err, errNotFound):
		return nil, fmt.Errorf("fortio at %s saved no result for run %s (%sdata/%s.json): it needs a writable -data-dir "+
			"(overlays/base/fortio.yaml passes -data-dir /var/lib/fortio); its log may say more: kubectl logs deploy/fortio",
			e.Remote.API, runID, e.Remote.API, started.ResultID)
	case err != nil:
		return nil, fmt.Errorf("fortio at %s: run %s: %w", e.Remote.API, runID, err)
	}
	return e.result(req, &res, native)
}

// stop asks fortio to stop a run and waits (bounded) for it to end.
func (e *Engine) stop(runID string, timeout time.Duration) {
	var r reply
	_ = e.call(context.Background(), timeout+apiTimeout, "rest/stop", url.Values{"runid": {runID}, "wait": {"on"}}, &r, nil)
}

func (e *Engine) result(req engine.Request, res *reply, native []byte) (*engine.Result, error) {
	if res.DurationHistogram == nil {
		return nil, fmt.Errorf("fortio at %s: result %s has no duration histogram", e.Remote.API, res.ID)
	}
	plain, sum := FromFortio(res.DurationHistogram)
	var errs int64
	if res.ErrorsDurationHistogram != nil {
		errs = res.ErrorsDurationHistogram.Count
	}
	out := &engine.Result{
		Engine:       Name,
		Start:        res.StartTime,
		Duration:     res.ActualDuration,
		RequestedQPS: req.Profile.QPS,
		ActualQPS:    res.ActualQPS,
		Requests:     res.DurationHistogram.Count,
		Errors:       errs,
		Codes:        map[string]int64{},
		Native:       native,
		Metadata: map[string]any{
			"fortio":                  e.Remote.API,
			"fortio_version":          res.Version,
			"fortio_id":               res.ID,
			"sockets_used":            res.SocketCount,
			"connections":             res.NumThreads,
			"url":                     res.URL,
			"precision":               PrecisionBuckets,
			"histogram_resolution_ms": Resolution * 1000,
			"corrected_latency":       CorrectedEqualsPlain,
		},
	}
	out.Latency.Plain, out.Latency.PlainSum = plain, sum
	corrected := latency.NewHistogram()
	corrected.Merge(plain)
	out.Latency.Corrected, out.Latency.CorrectedSum = corrected, sum
	for code, n := range res.RetCodes {
		out.Codes[strconv.Itoa(code)] = n
	}
	return out, nil
}
