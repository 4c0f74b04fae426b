// Package runner runs a scenario against targets: it plans the interleaved
// order, runs each step on the target's engine, saves every repetition to the
// result store as soon as it ends, and stops cleanly when its context is
// cancelled (Ctrl-C), keeping what finished and marking the run partial.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/registry"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// ErrInterrupted is returned when the context was cancelled during a run.
var ErrInterrupted = errors.New("interrupted")

// Config is one `bookload run`.
type Config struct {
	Scenario    *scenario.Scenario
	Targets     []loadtarget.Target
	Repetitions int               // 0: the scenario's
	Out         string            // results directory; a run directory is made in it
	Labels      map[string]string // recorded in run.json and every repetition
	// EngineFor picks the engine of a target; nil means registry.ByScheme.
	EngineFor func(loadtarget.Target) (engine.Engine, error)
	// Progress receives the live progress line; nil for none.
	Progress io.Writer
	Now      func() time.Time
	// Until, when set, makes the run sequential (--until-decided): after
	// each round of a profile, a profile whose verdicts Until calls decided
	// stops; so does one whose next round would not fit its share of Budget
	// (the budget split evenly over the profiles, what one leaves passing to
	// the next), or that reached Repetitions (then a cap, DefaultCap if 0).
	// Sequential is recorded in run.json with why each profile stopped.
	Until      Until
	Budget     time.Duration
	Sequential *results.Sequential
}

// Outcome is what a run produced.
type Outcome struct {
	Dir string
	Run results.Run
}

// Run executes cfg. It returns the outcome whenever a run directory was made,
// also with an error (ErrInterrupted after Ctrl-C) when the run is partial.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	s := cfg.Scenario
	reps := cfg.Repetitions
	if reps <= 0 {
		reps = s.Repetitions
		if cfg.Until != nil {
			reps = DefaultCap
		}
	}
	if cfg.Until != nil && (cfg.Budget <= 0 || cfg.Sequential == nil) {
		return nil, errors.New("a sequential run needs a budget and its record")
	}
	if len(cfg.Targets) == 0 {
		return nil, errors.New("no targets")
	}
	if err := loadtarget.CheckUnique(cfg.Targets); err != nil {
		return nil, err
	}
	pick := cfg.EngineFor
	if pick == nil {
		pick = registry.ByScheme
	}
	engines := map[string]engine.Engine{}
	engineNames := map[string]string{}
	for _, t := range cfg.Targets {
		e, err := pick(t)
		if err != nil {
			return nil, err
		}
		engines[t.Name], engineNames[t.Name] = e, e.Name()
	}
	for _, t := range cfg.Targets {
		req := engine.Request{Scenario: s, Profile: s.Profiles[0], Target: t}
		if err := engines[t.Name].Check(ctx, req); err != nil {
			return nil, err
		}
	}

	steps := Plan(s.Profiles, cfg.Targets, reps, s.Warmup > 0)
	var plan []results.Slot
	for _, st := range steps {
		if !st.Warmup {
			plan = append(plan, results.Slot{Profile: st.Profile.Name, Target: st.Target.Name, Repetition: st.Repetition})
		}
	}
	tool, machine := results.CurrentTool(), results.CurrentMachine()
	store, err := results.Create(cfg.Out, results.Run{
		Scenario: s, Targets: cfg.Targets, Engines: engineNames, Repetitions: reps,
		Plan: plan, Labels: cfg.Labels, Tool: tool, Machine: machine, Sequential: cfg.Sequential,
	}, cfg.Now)
	if err != nil {
		return nil, err
	}
	out := func() *Outcome { return &Outcome{Dir: store.Dir(), Run: store.Run()} }
	stopPartial := func(note string, err error) (*Outcome, error) {
		if ferr := store.Finish(results.StatusPartial, note); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return out(), err
	}

	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	var seq *sequential
	if cfg.Until != nil {
		seq = &sequential{budget: cfg.Budget, profiles: len(s.Profiles)}
	}
	stopped := "" // the profile a sequential run has stopped
	prog := &progress{w: cfg.Progress}
	for i, st := range steps {
		if st.Profile.Name == stopped {
			continue
		}
		begins, ends := roundEdges(steps, i)
		if seq != nil {
			if i == 0 || steps[i-1].Profile.Name != st.Profile.Name {
				seq.startProfile(now())
			}
			guess := time.Duration(len(cfg.Targets)) * st.Profile.Duration.Std()
			if !st.Warmup && begins && !seq.fits(now(), guess) {
				stopped = st.Profile.Name
				if err := store.Stopped(stopped, seq.why("budget spent", st.Repetition-1, now())); err != nil {
					return stopPartial("failed to save", err)
				}
				seq.endProfile(now())
				continue
			}
		}
		where := fmt.Sprintf("%s %s rep %d", st.Target.Name, st.Profile.Name, st.Repetition)
		if st.Warmup {
			where = fmt.Sprintf("%s %s warmup", st.Target.Name, st.Profile.Name)
		}
		if ctx.Err() != nil {
			return stopPartial("interrupted before "+where, ErrInterrupted)
		}
		req := engine.Request{Scenario: s, Profile: st.Profile, Target: st.Target, Repetition: st.Repetition, Labels: cfg.Labels}
		if st.Warmup {
			req.Profile.Duration = s.Warmup
		}
		live := func(l engine.Live) { prog.show(i+1, len(steps), st, reps, l) }
		res, err := engines[st.Target.Name].Run(ctx, req, live)
		prog.clear()
		if err != nil {
			return stopPartial("failed at "+where+": "+err.Error(), fmt.Errorf("%s: %w", where, err))
		}
		if res.Interrupted {
			return stopPartial("interrupted during "+where+" (not kept)", ErrInterrupted)
		}
		if st.Warmup {
			continue
		}
		rep, err := results.NewRep(req, res, tool, machine)
		if err != nil {
			return stopPartial("failed to record "+where, err)
		}
		if _, err := store.Add(rep, res.Native); err != nil {
			return stopPartial("failed to save "+where, err)
		}
		if seq == nil || !ends {
			continue
		}
		seq.endRound(now())
		decided, open, err := cfg.Until(store.Dir(), st.Profile.Name)
		if err != nil {
			return stopPartial("failed to judge "+where, err)
		}
		seq.open = open
		reason := "decided"
		switch {
		case decided:
			seq.open = nil
		case st.Repetition == reps:
			reason = "the cap reached"
		default:
			continue
		}
		stopped = st.Profile.Name
		if err := store.Stopped(stopped, seq.why(reason, st.Repetition, now())); err != nil {
			return stopPartial("failed to save", err)
		}
		seq.endProfile(now())
	}
	if err := store.Finish(results.StatusComplete, ""); err != nil {
		return out(), err
	}
	return out(), nil
}
