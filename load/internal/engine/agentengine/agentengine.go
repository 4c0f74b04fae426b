// Package agentengine runs load from a bookload agent (`bookload agent`,
// package agent) somewhere else, typically the `fortio` Deployment of a
// cluster running the bookload image, reached through a port-forward. Each
// warmup and repetition is one POST /bookload/v1/run; the agent runs it
// through the same in-process fortio engine a local `bookload run` uses and
// answers with the repetition document, so the stored result has the same
// per-request HdrHistograms (µs) and the same corrected latency as a local
// one.
//
// Target URL grammar (see load/README.md, "In a cluster"):
//
//	bookload+http://HOST:PORT[/BASE_PATH][?url=IN_CLUSTER_BASE_URL]
//	bookload+https://...
//
// HOST:PORT is the agent as bookload reaches it. BASE_PATH, if any, is put
// in front of the agent's endpoints: the agent behind a proxy that serves it
// under a prefix, e.g. the Kubernetes API server's service proxy,
// /api/v1/namespaces/NS/services/fortio:8080/proxy (one `kubectl proxy`
// then reaches the agents of every namespace). The agent loads
// IN_CLUSTER_BASE_URL followed by the scenario's path, by default
// http://<scenario service>:9080, the Service of that name in the agent's
// own namespace.
package agentengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// Name is the engine's name in run.json.
const Name = agent.EngineName

// CorrectedLatency is engine_metadata["corrected_latency"].
const CorrectedLatency = "from when fortio's schedule meant to send each request, recorded per request in the agent (as the local fortio engine does)"

// Remote is a parsed bookload+http(s) target URL.
type Remote struct {
	// API is the agent's base URL, its endpoints appended to it:
	// http://127.0.0.1:8080, or with a base path
	// http://127.0.0.1:8001/api/v1/namespaces/ns/services/fortio:8080/proxy.
	API string
	// Base is the in-cluster base URL given with ?url=, "" for the default.
	Base string
}

// ParseURL reads a bookload+http(s) target URL.
func ParseURL(raw string) (Remote, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Remote{}, fmt.Errorf("agent target URL %q: %w", raw, err)
	}
	scheme, ok := strings.CutPrefix(u.Scheme, "bookload+")
	if !ok || (scheme != "http" && scheme != "https") {
		return Remote{}, fmt.Errorf("agent target URL %q: scheme must be bookload+http or bookload+https", raw)
	}
	if u.Host == "" {
		return Remote{}, fmt.Errorf("agent target URL %q: no agent host, e.g. bookload+http://127.0.0.1:8080", raw)
	}
	if u.Fragment != "" || u.User != nil {
		return Remote{}, fmt.Errorf("agent target URL %q: no user or fragment allowed (the agent's endpoints are fixed)", raw)
	}
	base, err := basePath(u)
	if err != nil {
		return Remote{}, fmt.Errorf("agent target URL %q: %w", raw, err)
	}
	r := Remote{API: scheme + "://" + u.Host + base}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Remote{}, fmt.Errorf("agent target URL %q: query: %w", raw, err)
	}
	for k, v := range q {
		if k != "url" || len(v) != 1 {
			return Remote{}, fmt.Errorf("agent target URL %q: the only query parameter is url=IN_CLUSTER_BASE_URL, once", raw)
		}
		b, err := url.Parse(v[0])
		if err != nil || (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" || b.RawQuery != "" || b.Fragment != "" {
			return Remote{}, fmt.Errorf("agent target URL %q: url=%q must be an http(s) base URL with a host and no query, e.g. url=http://details.bookinfo-ambient:9080", raw, v[0])
		}
		r.Base = strings.TrimRight(v[0], "/")
	}
	return r, nil
}

// basePath is u's path without its trailing slash, escaped as given (a
// service proxy path holds "fortio:8080"): a prefix of the agent's endpoints,
// so never one of them, and without "." or ".." segments a proxy would
// resolve differently.
func basePath(u *url.URL) (string, error) {
	p := strings.TrimRight(u.EscapedPath(), "/")
	if p == "" {
		return "", nil
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("base path %q: empty, \".\" or \"..\" segment", u.Path)
		}
	}
	for _, fixed := range []string{strings.TrimRight(agent.UIPath, "/"), strings.TrimRight(agent.PathPrefix, "/")} {
		if strings.HasSuffix(p, fixed) || strings.Contains(p, fixed+"/") {
			return "", fmt.Errorf("no path to an endpoint allowed: the agent's endpoints are fixed; a path is only a prefix in front of them (e.g. an API server's service proxy, /api/v1/namespaces/NS/services/fortio:8080/proxy)")
		}
	}
	return p, nil
}

// LoadBase is the base URL the agent loads for a scenario's service.
func (r Remote) LoadBase(service string) string {
	if r.Base != "" {
		return r.Base
	}
	return loadtarget.InClusterBase(service)
}

// Engine drives one agent.
type Engine struct {
	Remote Remote
	// Poll is the progress polling interval; 0 means 250 ms.
	Poll time.Duration
	// Client makes the calls; nil means a plain http.Client.
	Client *http.Client
}

// New returns the engine for a bookload+http(s) target.
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

// apiTimeout bounds the calls that do not wait for load.
const apiTimeout = 10 * time.Second

// wire is req as the agent gets it: the target's URL is the in-cluster base.
func (e *Engine) wire(req engine.Request) agent.RunRequest {
	w := agent.NewRunRequest(req)
	w.Target.URL = e.Remote.LoadBase(req.Scenario.Service)
	return w
}

// errAgent is an error answer of the agent.
type errAgent struct {
	code int
	agent.ErrorReply
}

func (e *errAgent) Error() string {
	if e.Field != "" && !strings.HasPrefix(e.ErrorReply.Error, e.Field) {
		return fmt.Sprintf("HTTP %d: %s: %s", e.code, e.Field, e.ErrorReply.Error)
	}
	return fmt.Sprintf("HTTP %d: %s", e.code, e.ErrorReply.Error)
}

// call sends body (nil: a GET) to the agent's path and returns the 200
// answer's body; another status is an *errAgent.
func (e *Engine) call(ctx context.Context, timeout time.Duration, path string, body any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		method, rd = http.MethodPost, bytes.NewReader(b)
	}
	hr, err := http.NewRequestWithContext(ctx, method, e.Remote.API+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client().Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		ae := &errAgent{code: resp.StatusCode}
		if json.Unmarshal(data, &ae.ErrorReply) != nil || ae.ErrorReply.Error == "" {
			ae.ErrorReply.Error = fmt.Sprintf("not a bookload agent answer: %.120q", data)
		}
		return nil, ae
	}
	return data, nil
}

// Check implements engine.Engine: the agent must answer and run nothing
// else, accept every profile of the scenario (and the warmup) within its
// limits, and get an HTTP answer from the in-cluster URL.
func (e *Engine) Check(ctx context.Context, req engine.Request) error {
	data, err := e.call(ctx, apiTimeout, agent.StatusPath, nil)
	if err != nil {
		return fmt.Errorf("target %s: no bookload agent answers at %s (%w); is the port-forward running, and is the pod the agent "+
			"(overlays/components/bookload-agent)? e.g. kubectl -n bookinfo-ambient port-forward svc/fortio 8080:8080", req.Target.Name, e.Remote.API, err)
	}
	var st agent.StatusReply
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("target %s: %s does not answer as a bookload agent: %w", req.Target.Name, e.Remote.API, err)
	}
	if st.Busy || st.FortioRuns > 0 {
		return fmt.Errorf("target %s: the agent at %s is already running load (%d run(s) in fortio's REST status), which would skew the measurement: "+
			"wait for it or stop it (curl '%s/fortio/rest/stop')", req.Target.Name, e.Remote.API, st.FortioRuns, e.Remote.API)
	}
	s := req.Scenario
	checks := make([]engine.Request, 0, len(s.Profiles)+1)
	for _, p := range s.Profiles {
		checks = append(checks, engine.Request{Scenario: s, Profile: p, Target: req.Target, Repetition: 1, Labels: req.Labels})
	}
	if s.Warmup > 0 {
		w := engine.Request{Scenario: s, Profile: s.Profiles[0], Target: req.Target, Labels: req.Labels}
		w.Profile.Duration = s.Warmup
		checks = append(checks, w)
	}
	for _, c := range checks {
		wire := e.wire(c)
		data, err := e.call(ctx, s.Timeout.Std()+apiTimeout, agent.CheckPath, wire)
		var ae *errAgent
		switch {
		case errors.As(err, &ae) && ae.code == http.StatusBadGateway:
			return fmt.Errorf("target %s: %s; is the scenario's service %q deployed in the agent's namespace? (or give ?url=BASE)", req.Target.Name, ae.ErrorReply.Error, s.Service)
		case err != nil:
			return fmt.Errorf("target %s: the agent at %s refuses profile %s: %w", req.Target.Name, e.Remote.API, c.Profile.Name, err)
		}
		var cr agent.CheckReply
		if err := json.Unmarshal(data, &cr); err != nil {
			return fmt.Errorf("target %s: check reply of the agent at %s: %w", req.Target.Name, e.Remote.API, err)
		}
	}
	return nil
}

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	wire := e.wire(req)
	begin := time.Now()
	if live != nil {
		done := make(chan struct{})
		defer close(done)
		go e.progress(ctx, done, begin, live)
	}
	data, err := e.call(ctx, agent.Bound(&wire)+apiTimeout, agent.RunPath, wire)
	if ctx.Err() != nil {
		// Closing the connection stops the run in the agent; in case a
		// port-forward kept the agent's side open, it is also stopped the way
		// fortio's runs are, so no load keeps running in the cluster.
		e.stop(wire)
		return &engine.Result{Engine: Name, Interrupted: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bookload agent at %s: %w", e.Remote.API, err)
	}
	return e.result(data)
}

// stop stops the agent's run of w, if it still runs, through fortio's
// /fortio/rest/stop (the agent lists its runs there) and waits for it.
func (e *Engine) stop(w agent.RunRequest) {
	ctx := context.Background()
	data, err := e.call(ctx, apiTimeout, agent.StatusPath, nil)
	if err != nil {
		return
	}
	var st agent.StatusReply
	if json.Unmarshal(data, &st) != nil || st.Run == nil || st.Run.FortioRunID == 0 ||
		st.Run.Scenario != w.Scenario.Name || st.Run.Target != w.Target.Name || st.Run.Profile != w.Profile.Name || st.Run.Repetition != w.Repetition {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, w.Scenario.Timeout.Std()+apiTimeout)
	defer cancel()
	u := fmt.Sprintf("%s%srest/stop?runid=%d&wait=on", e.Remote.API, agent.UIPath, st.Run.FortioRunID)
	if hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil); err == nil {
		if resp, err := e.client().Do(hr); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
}

// progress polls the agent's status for the live line.
func (e *Engine) progress(ctx context.Context, done <-chan struct{}, begin time.Time, live func(engine.Live)) {
	poll := e.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		l := engine.Live{Elapsed: time.Since(begin), Requests: -1, Errors: -1}
		if data, err := e.call(ctx, poll*4, agent.StatusPath, nil); err == nil {
			var st agent.StatusReply
			if json.Unmarshal(data, &st) == nil && st.Run != nil {
				l.Requests, l.Errors = st.Run.Requests, st.Run.Errors
			}
		}
		select {
		case <-done:
			return
		default:
			live(l)
		}
	}
}

// result turns the agent's repetition document back into an engine result:
// the histograms as recorded, the exact sums from the exact averages.
func (e *Engine) result(doc []byte) (*engine.Result, error) {
	var d struct {
		Bookload *results.Rep `json:"bookload"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("bookload agent at %s: result is not JSON: %w", e.Remote.API, err)
	}
	rep := d.Bookload
	if rep == nil {
		return nil, fmt.Errorf("bookload agent at %s: result without a \"bookload\" object", e.Remote.API)
	}
	plain, err := latency.Decode(rep.Latency.Plain.HdrHistogram)
	if err != nil {
		return nil, fmt.Errorf("bookload agent at %s: plain %w", e.Remote.API, err)
	}
	corrected, err := latency.Decode(rep.Latency.Corrected.HdrHistogram)
	if err != nil {
		return nil, fmt.Errorf("bookload agent at %s: corrected %w", e.Remote.API, err)
	}
	if plain.TotalCount() != rep.Requests || corrected.TotalCount() != rep.Requests {
		return nil, fmt.Errorf("bookload agent at %s: result holds %d requests but histograms of %d and %d", e.Remote.API, rep.Requests, plain.TotalCount(), corrected.TotalCount())
	}
	sum := func(s latency.Summary) time.Duration {
		return time.Duration(s.Avg * float64(s.Count) * float64(time.Millisecond))
	}
	md := map[string]any{}
	for k, v := range rep.EngineMetadata {
		md[k] = v
	}
	md["agent"] = e.Remote.API
	md["agent_engine"] = rep.Engine
	md["agent_bookload"] = rep.Tool.Bookload
	md["agent_fortio"] = rep.Tool.Fortio
	md["agent_go"] = rep.Tool.Go
	md["agent_machine"] = rep.Machine
	md["precision"] = "per-request"
	md["corrected_latency"] = CorrectedLatency
	out := &engine.Result{
		Engine:       Name,
		Start:        rep.Start,
		Duration:     time.Duration(rep.DurationSeconds * float64(time.Second)),
		RequestedQPS: rep.RequestedQPS,
		ActualQPS:    rep.ActualQPS,
		Requests:     rep.Requests,
		Errors:       rep.Errors,
		Codes:        rep.Codes,
		Native:       doc,
		Metadata:     md,
	}
	out.Latency.Plain, out.Latency.PlainSum = plain, sum(rep.Latency.Plain.SummaryMS)
	out.Latency.Corrected, out.Latency.CorrectedSum = corrected, sum(rep.Latency.Corrected.SummaryMS)
	if out.Codes == nil {
		out.Codes = map[string]int64{}
	}
	// The agent records hops as the local engine does; an older agent sends none.
	if out.Hops, err = hops.FromDoc(rep.Hops); err != nil {
		return nil, fmt.Errorf("bookload agent at %s: %w", e.Remote.API, err)
	}
	return out, nil
}
