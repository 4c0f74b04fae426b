package meshproof

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// MetadataKey is where a repetition's proof is kept in its engine metadata.
const MetadataKey = "mesh_proof"

// Engine wraps a target's engine: each repetition (not a warmup) is
// observed just before and just after its load, and its Proof is added to
// the result's metadata under MetadataKey. It is outside the cost window
// when it wraps a cluster-cost engine (Wrap after clustercost.Wrap).
type Engine struct {
	Inner    engine.Engine
	Observer *Observer
	Claim    Claim
}

// Name implements engine.Engine: the inner engine's name.
func (e *Engine) Name() string { return e.Inner.Name() }

// Check implements engine.Engine: the inner engine's check; the claimed
// mode from the namespace's labels when neither the flag nor the target's
// name gave one; then one observation, so that what cannot be read fails
// before any load. A claim the cluster contradicts is not an error here:
// its repetitions run and are marked invalid, with the reasons.
func (e *Engine) Check(ctx context.Context, req engine.Request) error {
	if err := e.Inner.Check(ctx, req); err != nil {
		return err
	}
	if e.Claim.Mode == "" {
		labels, err := e.Observer.NamespaceLabels(ctx, e.Claim.Namespace)
		if err != nil {
			return fmt.Errorf("--mesh %s=%s: %w", e.Claim.Target, e.Claim.Namespace, err)
		}
		if e.Claim.Mode, err = ModeFromLabels(e.Claim.Namespace, labels); err != nil {
			return fmt.Errorf("--mesh %s=%s: %w", e.Claim.Target, e.Claim.Namespace, err)
		}
		e.Claim.From = "labels"
	}
	if ob := e.Observer.Observe(ctx, e.Claim.Namespace); len(ob.Errors) > 0 {
		return fmt.Errorf("--mesh %s=%s: the data path cannot be proven: %s", e.Claim.Target, e.Claim.Namespace, strings.Join(ob.Errors, "; "))
	}
	return nil
}

// Run implements engine.Engine.
func (e *Engine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	if req.Repetition == 0 {
		return e.Inner.Run(ctx, req, live)
	}
	before := e.Observer.Observe(ctx, e.Claim.Namespace)
	res, err := e.Inner.Run(ctx, req, live)
	if err != nil || res == nil || res.Interrupted {
		return res, err
	}
	after := e.Observer.Observe(ctx, e.Claim.Namespace)
	if res.Metadata == nil {
		res.Metadata = map[string]any{}
	}
	res.Metadata[MetadataKey] = Judge(e.Claim, before, after, res.Requests-res.Errors)
	return res, nil
}

// Wrap wraps the engines of the claimed targets; the others are left as
// pick makes them. Every claim must name a target.
func Wrap(pick func(loadtarget.Target) (engine.Engine, error), o *Observer, claims []Claim, targets []loadtarget.Target) (func(loadtarget.Target) (engine.Engine, error), error) {
	byTarget := map[string]Claim{}
	for _, c := range claims {
		if _, dup := byTarget[c.Target]; dup {
			return nil, fmt.Errorf("--mesh %s given twice", c.Target)
		}
		found := false
		for _, t := range targets {
			found = found || t.Name == c.Target
		}
		if !found {
			var names []string
			for _, t := range targets {
				names = append(names, t.Name)
			}
			return nil, fmt.Errorf("--mesh %s=%s: no target is named %s (targets: %s)", c.Target, c.Namespace, c.Target, strings.Join(names, ", "))
		}
		byTarget[c.Target] = c
	}
	return func(t loadtarget.Target) (engine.Engine, error) {
		e, err := pick(t)
		if err != nil {
			return nil, err
		}
		c, ok := byTarget[t.Name]
		if !ok {
			return e, nil
		}
		return &Engine{Inner: e, Observer: o, Claim: c}, nil
	}, nil
}

// FromMetadata reads a stored repetition's proof; nil when it has none.
func FromMetadata(md map[string]any) *Proof {
	v, ok := md[MetadataKey]
	if !ok {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var p Proof
	if json.Unmarshal(b, &p) != nil {
		return nil
	}
	return &p
}

// Invalid says whether a stored repetition's data path was disproven (or
// not proven), and why; a repetition without a proof is not invalid.
func Invalid(md map[string]any) (bool, string) {
	p := FromMetadata(md)
	if p == nil || p.Valid {
		return false, ""
	}
	if len(p.Reasons) == 0 {
		return true, "the data path was not proven"
	}
	return true, strings.Join(p.Reasons, "; ")
}
