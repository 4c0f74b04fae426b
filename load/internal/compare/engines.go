package compare

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// splitEngines keeps the repetitions of one target name driven by different
// engines apart: when runs given together drove a target name with more than
// one engine (e.g. `bookload run ... --label engine=fortio` and the same with
// `--engine k6`), that target's rows are named NAME@ENGINE ("tuned@fortio",
// "tuned@k6"), side by side, instead of pooling two load generators into one
// median. Runs are copied, not changed; names that need no split stay as they are.
func splitEngines(runs []*results.Loaded) []*results.Loaded {
	engines := map[string]map[string]bool{} // target -> engines
	note := func(tg, e string) {
		if engines[tg] == nil {
			engines[tg] = map[string]bool{}
		}
		engines[tg][e] = true
	}
	for _, l := range runs {
		for _, tg := range l.Run.Targets {
			note(tg.Name, l.Run.Engines[tg.Name])
		}
		for _, r := range l.Reps {
			note(r.Target, r.Engine)
		}
	}
	split := false
	for _, es := range engines {
		split = split || len(es) > 1
	}
	if !split {
		return runs
	}
	name := func(tg, e string) string {
		if len(engines[tg]) > 1 {
			return tg + "@" + e
		}
		return tg
	}
	out := make([]*results.Loaded, len(runs))
	for i, l := range runs {
		c := *l
		c.Run.Targets = slices.Clone(l.Run.Targets)
		c.Run.Engines = map[string]string{}
		for j, tg := range c.Run.Targets {
			e := l.Run.Engines[tg.Name]
			c.Run.Targets[j].Name = name(tg.Name, e)
			c.Run.Engines[c.Run.Targets[j].Name] = e
		}
		c.Reps = slices.Clone(l.Reps)
		for j := range c.Reps {
			c.Reps[j].Target = name(c.Reps[j].Target, c.Reps[j].Engine)
		}
		out[i] = &c
	}
	return out
}

// resolveBaseline lets --baseline NAME pick NAME@ENGINE when NAME was split
// by engine (the first engine in name order).
func resolveBaseline(baseline string, targets []string) string {
	if baseline == "" || slices.Contains(targets, baseline) {
		return baseline
	}
	var cands []string
	for _, tg := range targets {
		if strings.HasPrefix(tg, baseline+"@") {
			cands = append(cands, tg)
		}
	}
	if len(cands) == 0 {
		return baseline
	}
	sort.Strings(cands)
	return cands[0]
}

// droppedWarning warns about iterations k6 dropped (engine_metadata
// "dropped_iterations"): every connection was busy when a request was due, so
// it was never sent, and the latencies describe a lower load than offered.
func droppedWarning(who string, reps []results.Rep) []string {
	var dropped, requests int64
	in := 0
	for _, r := range reps {
		requests += r.Requests
		if d := metadataInt(r.EngineMetadata["dropped_iterations"]); d > 0 {
			dropped += d
			in++
		}
	}
	if dropped == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: k6 dropped %d iterations (%.1f%% of %d due) in %d of %d repetitions: every connection was busy when they were due, so they were never sent and have no latency",
		who, dropped, 100*float64(dropped)/float64(dropped+requests), dropped+requests, in, len(reps))}
}

func metadataInt(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	return 0
}

// Reps returns the repetitions behind a row (after any split by engine).
func (t *Table) Reps(r Row) []results.Rep {
	return t.reps[rowKey{r.Scenario, r.Profile, r.Target}]
}
