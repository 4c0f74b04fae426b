package throughput

import (
	"context"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/proc"
)

// Engine wraps an engine that runs in this process (the in-process fortio
// engine) and adds to each repetition the CPU this process used during it,
// as process_cpu_seconds: the load generator's cost, plus the echo
// server's when it runs here too. Remote engines (an agent, k6 as a child
// process) are not wrapped: this process is not where their work happens.
type Engine struct {
	Inner engine.Engine
}

// Name implements engine.Engine: the inner engine's.
func (e *Engine) Name() string { return e.Inner.Name() }

// Check implements engine.Engine.
func (e *Engine) Check(ctx context.Context, req engine.Request) error {
	return e.Inner.Check(ctx, req)
}

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	before := proc.SelfCPU()
	res, err := e.Inner.Run(ctx, req, live)
	if err != nil || res == nil || res.Interrupted || req.Repetition == 0 {
		return res, err
	}
	if res.Metadata == nil {
		res.Metadata = map[string]any{}
	}
	res.Metadata[ProcessCPU] = proc.SelfCPU() - before
	return res, nil
}

// Wrap wraps the engines pick returns whose name is one of inProcess.
func Wrap(pick func(loadtarget.Target) (engine.Engine, error), inProcess ...string) func(loadtarget.Target) (engine.Engine, error) {
	return func(t loadtarget.Target) (engine.Engine, error) {
		e, err := pick(t)
		if err != nil {
			return nil, err
		}
		for _, n := range inProcess {
			if e.Name() == n {
				return &Engine{Inner: e}, nil
			}
		}
		return e, nil
	}
}
