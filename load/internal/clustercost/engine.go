package clustercost

import (
	"context"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// Source measures a window's cost: the kubelet summary API (Sampler) or
// Prometheus (Prometheus).
type Source interface {
	// Name is cluster_cost.source.
	Name() string
	// Probe reads the source once, so that a source that cannot be read
	// fails before any load.
	Probe(ctx context.Context) error
	// Begin starts a window.
	Begin(ctx context.Context) (Window, error)
}

// Window is a window being measured.
type Window interface {
	// Stop ends the window and returns its cost, without requests (see
	// Cost.SetRequests).
	Stop() *Cost
}

// Engine wraps another engine: each repetition (not a warmup) is measured
// from just before the load starts to just after it ends, and its cost is
// added to the result's metadata as "cluster_cost".
type Engine struct {
	Inner  engine.Engine
	Source Source
}

// Name implements engine.Engine: the inner engine's name (the cost is a
// measurement beside the load, not another load generator).
func (e *Engine) Name() string { return e.Inner.Name() }

// Check implements engine.Engine: the inner engine's check, then one sample
// of the cluster, so that a proxy without access to the nodes fails before
// any load.
func (e *Engine) Check(ctx context.Context, req engine.Request) error {
	if err := e.Inner.Check(ctx, req); err != nil {
		return err
	}
	return e.Source.Probe(ctx)
}

// Run implements engine.Engine. A sampling failure does not lose the
// repetition: its cost then says why it is missing.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	if req.Repetition == 0 {
		return e.Inner.Run(ctx, req, live)
	}
	w, werr := e.Source.Begin(ctx)
	res, err := e.Inner.Run(ctx, req, live)
	var cost any
	if werr != nil {
		cost = map[string]string{"source": e.Source.Name(), "error": werr.Error()}
	} else {
		c := w.Stop()
		if res != nil {
			c.SetRequests(res.Requests - res.Errors)
		}
		cost = c
	}
	if err != nil || res == nil || res.Interrupted {
		return res, err
	}
	if res.Metadata == nil {
		res.Metadata = map[string]any{}
	}
	res.Metadata["cluster_cost"] = cost
	return res, nil
}

// Wrap wraps every engine pick returns with the cost s measures.
func Wrap(pick func(loadtarget.Target) (engine.Engine, error), s Source) func(loadtarget.Target) (engine.Engine, error) {
	return func(t loadtarget.Target) (engine.Engine, error) {
		e, err := pick(t)
		if err != nil {
			return nil, err
		}
		return &Engine{Inner: e, Source: s}, nil
	}
}
