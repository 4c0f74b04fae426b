// Package agent is `bookload agent`: an HTTP server that serves fortio's own
// UI and REST API (package fortio.org/fortio/ui, so every fortio REST client,
// the fortio UI and `fortio report` keep working against it) and, next to
// them, runs one repetition of a scenario profile through the same
// in-process engine `bookload run` uses locally (package fortioengine: per
// request HdrHistograms in µs, with the coordinated-omission-corrected twin)
// and answers with the same repetition document a local run stores.
//
// It is the load client of a cluster: the `fortio` Deployment of overlays/
// with this image instead of stock fortio, driven from outside by the
// bookload+http engine (package agentengine) through a port-forward.
//
// Its endpoints and their bodies are package agentwire's.
package agent

import (
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agentwire"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// DefaultLimits are `bookload agent`'s defaults (its flags change them).
var DefaultLimits = agentwire.Limits{
	MaxDuration:    scenario.Duration(10 * time.Minute),
	MaxConnections: 1000,
	MaxQPS:         50000,
}
