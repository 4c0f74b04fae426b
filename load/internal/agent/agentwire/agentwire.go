// Package agentwire is the protocol of `bookload agent`: its endpoint paths
// and the JSON bodies the agent (package agent, the server) and its client
// (package agentengine, the bookload+http engine) exchange. Both import it;
// neither imports the other.
//
// Endpoints, besides fortio's (UIPath: /fortio/, /fortio/rest/..., and
// /debug, /echo):
//
//	GET  /bookload/v1/status  what runs, the limits, the agent's versions
//	POST /bookload/v1/check   validate a RunRequest, send one GET to its URL
//	POST /bookload/v1/run     run a RunRequest; 200 with the repetition
//	                          document (fortio's result JSON plus "bookload")
//
// Errors are JSON ErrorReply: 400 naming the bad field, 405, 409 when a run
// (bookload's or one of fortio's REST API) is already going, 413 for a body
// over 1 MiB, 502 when the check's target does not answer.
package agentwire

import (
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Endpoint paths.
const (
	// UIPath is fortio's UI and REST prefix, as the stock fortio server has it.
	UIPath = "/fortio/"

	PathPrefix = "/bookload/v1/"
	StatusPath = PathPrefix + "status"
	CheckPath  = PathPrefix + "check"
	RunPath    = PathPrefix + "run"
)

// EngineName is the engine recorded for repetitions run by an agent.
const EngineName = "bookload-agent"

// RunRequest is one repetition (or warmup, repetition 0) to run: the body of
// /bookload/v1/check and /bookload/v1/run. Target.URL is the base URL as the
// agent reaches it (in a cluster: http://productpage:9080); the scenario's
// path is appended to it.
type RunRequest struct {
	Scenario   *scenario.Scenario `json:"scenario"`
	Profile    scenario.Profile   `json:"profile"`
	Target     loadtarget.Target  `json:"target"`
	Repetition int                `json:"repetition"`
	Labels     map[string]string  `json:"labels,omitempty"`
}

// NewRunRequest is the wire form of an engine request.
func NewRunRequest(req engine.Request) RunRequest {
	return RunRequest{Scenario: req.Scenario, Profile: req.Profile, Target: req.Target, Repetition: req.Repetition, Labels: req.Labels}
}

// EngineRequest is the engine request of a validated RunRequest.
func (r RunRequest) EngineRequest() engine.Request {
	return engine.Request{Scenario: r.Scenario, Profile: r.Profile, Target: r.Target, Repetition: r.Repetition, Labels: r.Labels}
}

// ErrorReply is the body of every error answer.
type ErrorReply struct {
	Error string `json:"error"`
	// Field names the request field at fault (400 only), as a JSON path:
	// "profile.qps", "scenario.headers[0]".
	Field string `json:"field,omitempty"`
}

// CheckReply is the answer of /bookload/v1/check: the agent got an HTTP
// answer (any status) from URL.
type CheckReply struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// Limits bound what one request may ask for.
type Limits struct {
	MaxDuration    scenario.Duration `json:"max_duration"`
	MaxConnections int               `json:"max_connections"`
	MaxQPS         float64           `json:"max_qps"`
}

// RunInfo describes the run in progress.
type RunInfo struct {
	Scenario    string    `json:"scenario"`
	Target      string    `json:"target"`
	Profile     string    `json:"profile"`
	Repetition  int       `json:"repetition"`
	URL         string    `json:"url"`
	Started     time.Time `json:"started"`
	FortioRunID int64     `json:"fortio_run_id,omitempty"`
	// Progress so far, updated about 4 times a second.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
}

// StatusReply is the answer of /bookload/v1/status.
type StatusReply struct {
	Busy bool     `json:"busy"`
	Run  *RunInfo `json:"run,omitempty"`
	// FortioRuns counts the runs in fortio's REST status, the agent's own
	// included.
	FortioRuns int             `json:"fortio_runs"`
	Limits     Limits          `json:"limits"`
	Tool       results.Tool    `json:"tool"`
	Machine    results.Machine `json:"machine"`
}

// Bound is the longest a run of req may take before the agent stops it:
// the duration, then the requests in flight (each bounded by the timeout),
// with a margin. The client waits as long plus its own margin.
func Bound(req *RunRequest) time.Duration {
	return req.Profile.Duration.Std() + 2*req.Scenario.Timeout.Std() + 30*time.Second
}
