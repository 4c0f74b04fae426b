package clustercost

import (
	"context"
	"fmt"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// Engine wraps another engine: each repetition (not a warmup) is sampled
// from just before the load starts to just after it ends, and its cost is
// added to the result's metadata as "cluster_cost".
type Engine struct {
	Inner   engine.Engine
	Sampler *Sampler
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
	if _, err := e.Sampler.Snapshot(ctx); err != nil {
		return fmt.Errorf("%w (the cost needs GET on nodes and nodes/proxy)", err)
	}
	return nil
}

// Run implements engine.Engine. A sampling failure does not lose the
// repetition: its cost then says why it is missing.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	if req.Repetition == 0 {
		return e.Inner.Run(ctx, req, live)
	}
	w, werr := e.Sampler.Start(ctx)
	res, err := e.Inner.Run(ctx, req, live)
	var cost any
	if werr != nil {
		cost = map[string]string{"source": Source, "error": werr.Error()}
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

// Wrap wraps every engine pick returns with the cost of the cluster s
// samples.
func Wrap(pick func(loadtarget.Target) (engine.Engine, error), s *Sampler) func(loadtarget.Target) (engine.Engine, error) {
	return func(t loadtarget.Target) (engine.Engine, error) {
		e, err := pick(t)
		if err != nil {
			return nil, err
		}
		return &Engine{Inner: e, Sampler: s}, nil
	}
}
