package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"fortio.org/fortio/fhttp"
	flog "fortio.org/log"
	"gopkg.in/yaml.v3"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/proc"
)

// kind is how one kind of part (an entry of the plan's parts:) is read,
// measured and judged. A new part is an entry in the plan and, for a new
// kind, one entry here: its measure function stores what it measured in the
// Outcome, its judge function turns that into verdicts (judge.go).
type kind struct {
	fields, required []string            // plan fields beyond name and kind; of them, the required ones
	load             []string            // the fields its load: must give
	targets          []string            // the targets it may be judged on
	stacks           bool                // needs the tuned and legacy stacks running
	stacksIf         func(pt *Part) bool // instead of stacks, when it depends on the part
	needs            func(p *Plan, pt *Part) []string
	measure          func(ctx context.Context, b *bench, pt *Part) error
	judge            func(o *Outcome, pt *Part) []Verdict
	// parse reads the fields of its own (into Part.Spec), section renders
	// its part's section of BENCHMARKS.md; nil for kinds the template knows.
	parse   func(r *reader, f map[string]*yaml.Node, path string, pt *Part)
	section func(o *Outcome, pt *Part) string
}

var kinds map[string]*kind

func init() {
	kinds = map[string]*kind{
		// The loopback floor: fortio's echo server in this process, then in
		// a process of its own, at the base profile.
		"floor": {needs: none, measure: measureFloor, judge: func(*Outcome, *Part) []Verdict { return nil }},
		// One route alone: tuned against legacy in bursts, tuned with
		// uniform arrival, both at the base profile; then tuned, uniform,
		// at its busy load if it has one. Judged in floors, so the floor
		// runs with it.
		"endpoint": {fields: []string{"service", "path", "title", "busy", "targets"}, required: []string{"service", "path"},
			targets: []string{"service_p50_floors", "service_p999_ms", "page_p50_ms", "page_p99_ms", "legacy_details_p99_factor"},
			stacks:  true, needs: func(p *Plan, _ *Part) []string { return names(p.OfKind("floor")) },
			measure: measureEndpoint, judge: judgeEndpoint},
		// The framework floor (framework.go): path on every service that has
		// a route with a busy load, set against those routes.
		"framework": {fields: []string{"path", "load"}, required: []string{"path", "load"}, load: []string{"qps", "connections"},
			targets: []string{"framework_factor"}, stacks: true,
			needs: func(p *Plan, _ *Part) []string {
				var out []string
				for _, e := range p.OfKind("endpoint") {
					if e.Busy != nil {
						out = append(out, e.Name)
					}
				}
				return out
			},
			measure: measureFramework, judge: judgeFramework},
		// Each hop's residual on the full page against the loopback floor,
		// both measured here in turn (hops.go).
		"hops": {fields: []string{"load"}, required: []string{"load"}, load: []string{"qps", "connections"},
			targets: []string{"hop_residual_floors"}, stacks: true, needs: none, measure: measureHops, judge: judgeHops},
		// Each costed route's own CPU with Server-Timing on and off,
		// interleaved, against its framework floor (hops.go).
		"timing-cost": {targets: []string{"framework_factor"}, stacks: true,
			needs:   func(p *Plan, _ *Part) []string { return names(p.OfKind("framework")) },
			measure: measureTimingCost, judge: judgeTimingCost},
		"ladder": {fields: []string{"duration", "rungs"}, required: []string{"duration", "rungs"}, targets: []string{"hold_fraction"},
			stacks: true, needs: none, measure: measureLadder, judge: func(*Outcome, *Part) []Verdict { return nil }},
		// The search reads the ladder's first rung not held as its upper
		// bound when the ladder ran; it does not need it.
		"maxrate": {fields: []string{"load"}, required: []string{"load"}, load: []string{"qps", "duration"},
			targets: []string{"max_rate_rps", "max_rate_p99_ms", "hold_fraction", "cpu_per_page_ms"},
			stacks:  true, needs: none, measure: measureMaxRate, judge: judgeMaxRate},
		"soak": {fields: []string{"load"}, required: []string{"load"}, load: []string{"qps", "connections", "duration"},
			targets: []string{"soak_rss_slope_mb", "soak_rss_step_mb"}, stacks: true, needs: none, measure: measureSoak, judge: judgeSoak},
		// The peak resident memory of every service, read when it runs:
		// put it last.
		// A published experiment (scenarios/), shortened: reported, judged
		// only on its natural targets (scenariopart.go).
		"scenario": {fields: scenarioFields, required: []string{"scenario", "duration", "repetitions"}, targets: scenarioTargets,
			stacksIf: scenarioStacks, needs: none, measure: measureScenario, judge: judgeScenario, parse: parseScenario, section: scenarioSection},
		// Rounds of slow heads and non-readers against every tuned service;
		// its memory must come back (hostilesoak.go).
		"hostile-soak": {fields: hostileFields, required: hostileFields, targets: hostileTargets,
			stacks: true, needs: none, measure: measureHostile, judge: judgeHostile, parse: parseHostile, section: hostileSection},
		// The known answer on the full page: two delay proxies a set time
		// apart, loaded at once until pinned (knownshift.go).
		"known-shift": {fields: knownShiftFields, required: knownShiftRequired, load: []string{"qps", "connections", "duration"},
			targets: knownShiftTargets, stacks: true, needs: none,
			measure: measureKnownShift, judge: judgeKnownShift, parse: parseKnownShift, section: knownShiftSection},
		"memory": {targets: []string{"total_rss_mb"}, stacks: true, needs: none, measure: measureMemory, judge: judgeMemory},
	}
}

func none(*Plan, *Part) []string { return nil }

// needsStacks says whether part pt needs the tuned and legacy stacks.
func needsStacks(pt *Part) bool {
	k := kinds[pt.Kind]
	return k.stacks || (k.stacksIf != nil && k.stacksIf(pt))
}

func names(ps []*Part) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func kindNames() []string {
	var out []string
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// knownTargets is every target some kind may be judged on.
func knownTargets() []string {
	var out []string
	for _, k := range kindNames() {
		for _, t := range kinds[k].targets {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// measureFloor measures fortio's echo server in this process, then as a
// process of its own (floorProcess).
func measureFloor(ctx context.Context, b *bench, _ *Part) error {
	echo, err := startEcho()
	if err != nil {
		return err
	}
	for _, uniform := range []bool{false, true} {
		s := b.scenario("bench-floor", "echo", "/echo", uniform, b.base())
		s.Description = "floor: fortio's echo server (in-process, loopback) " + pattern(uniform)
		m, err := b.measure(ctx, s, []loadtarget.Target{echo})
		if err != nil {
			return err
		}
		b.o.Floor[uniform] = m
	}
	// The same echo server in a process of its own: what one process hop on
	// loopback costs before any service code runs (wake-ups of a second
	// process instead of goroutines of one).
	return b.floorProcess(ctx)
}

// startEcho starts fortio's echo server in this process on loopback: the
// floor's target.
func startEcho() (loadtarget.Target, error) {
	flog.SetLogLevelQuiet(flog.Critical)
	_, addr := fhttp.ServeTCP("127.0.0.1:0", "")
	if addr == nil {
		return loadtarget.Target{}, errors.New("could not start fortio's echo server on loopback")
	}
	return loadtarget.Target{Name: "echo", URL: "http://" + addr.String()}, nil
}

// measureEndpoint measures one route alone: tuned vs legacy in bursts
// (fortio's default, the published tables' pattern), tuned alone with
// uniform arrival (per-request latency without the burst's queue), then at
// its busy load, where the process no longer sleeps between requests.
func measureEndpoint(ctx context.Context, b *bench, e *Part) error {
	b.o.Alone[e.Name] = map[bool]*Measure{}
	for _, uniform := range []bool{false, true} {
		s := b.scenario("bench-"+e.Name, e.Service, e.Path, uniform, b.base())
		s.Description = e.Title + ", " + pattern(uniform)
		targets := []loadtarget.Target{b.targetOf("legacy", e.Service), b.targetOf("tuned", e.Service)}
		if uniform {
			targets = targets[1:]
		}
		m, err := b.measure(ctx, s, targets)
		if err != nil {
			return err
		}
		b.o.Alone[e.Name][uniform] = m
	}
	if e.Busy == nil {
		return nil
	}
	s := b.scenario("bench-"+e.Name+"-busy", e.Service, e.Path, true, e.Busy.Profile(b.tm.Rep))
	s.Description = fmt.Sprintf("%s at %g RPS, %s", e.Title, e.Busy.QPS, pattern(true))
	m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", e.Service)})
	if err != nil {
		return err
	}
	b.o.AloneBusy[e.Name] = m
	return nil
}

// measureLadder runs the full page at each rung, one repetition per stack,
// until a stack no longer holds the rate (it then leaves the ladder).
func measureLadder(ctx context.Context, b *bench, pt *Part) error {
	b.speed("before the ladder")
	active := []string{"legacy", "tuned"}
	for _, rung := range pt.Rungs {
		if len(active) == 0 {
			break
		}
		var targets []loadtarget.Target
		for _, p := range active {
			targets = append(targets, b.targetOf(p, b.o.Plan.Page.Service))
		}
		pr := rung.Profile(b.tm.LadderStep)
		s := b.scenario("bench-page-ladder", b.o.Plan.Page.Service, b.o.Plan.Page.Path, false, pr)
		s.Description = "full page over the ladder, " + pattern(false)
		s.Repetitions = 1
		m, err := b.measure(ctx, s, targets)
		if err != nil {
			return err
		}
		var still []string
		for _, p := range active {
			probe := Probe{Rate: rung.QPS, Conns: pr.Connections, Duration: b.tm.LadderStep, Target: p, Row: m.Row(pr.Name, p), Measure: m}
			b.o.Ladder = append(b.o.Ladder, probe)
			if probe.Held(b.o.Plan.Targets) && probe.Row.Errors == 0 {
				still = append(still, p)
			}
		}
		active = still
	}
	return nil
}

// measureMaxRate searches the highest full-page rate the tuned stack holds
// for a whole probe (the part's duration) with zero errors and p99 within
// max_rate_p99_ms, with uniform arrival (a burst of rate/10 simultaneous
// pages every 100 ms would measure the burst's queue, not the capacity) over
// rate/10 connections as on the ladder. It starts at the part's rate, then
// moves up (towards the first ladder rung not held, or double) or down by
// bisection on a 50 RPS grid: at most Timing.Probes probes.
func measureMaxRate(ctx context.Context, b *bench, pt *Part) error {
	lo, hi := 0.0, math.Inf(1)
	for _, p := range b.o.Ladder {
		if p.Target == "tuned" && !p.Held(b.o.Plan.Targets) && math.IsInf(hi, 1) {
			hi = p.Rate
		}
	}
	next := pt.Load.QPS
	if next >= hi {
		next = grid(hi / 2)
	}
	page := b.o.Plan.Page
	for i := 0; i < b.tm.Probes && next >= 50; i++ {
		b.speed(fmt.Sprintf("before the %g RPS probe", next))
		pr := profile(next, conns(next), b.tm.Probe)
		s := b.scenario("bench-page-maxrate", page.Service, page.Path, true, pr)
		s.Description = fmt.Sprintf("maximum sustainable full-page rate: held %v with zero errors and p99 %s ms, %s", b.tm.Probe, b.o.Plan.Targets.T("max_rate_p99_ms").Text(), pattern(true))
		s.Repetitions = 1
		m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", page.Service)})
		if err != nil {
			return err
		}
		probe := Probe{Rate: next, Conns: pr.Connections, Duration: b.tm.Probe, Target: "tuned", Row: m.Row(pr.Name, "tuned"), Measure: m}
		b.o.MaxRate = append(b.o.MaxRate, probe)
		if probe.OK(b.o.Plan.Targets) {
			lo = next
		} else {
			hi = next
		}
		var cand float64
		switch {
		case math.IsInf(hi, 1):
			cand = 2 * lo
		default:
			cand = grid((lo + hi) / 2)
		}
		if cand <= lo || cand >= hi || (hi-lo) <= math.Max(50, 0.1*lo) {
			break
		}
		next = cand
	}
	return nil
}

// measureMemory reads every service's resident memory, peak and now.
func measureMemory(_ context.Context, b *bench, _ *Part) error {
	b.o.Usage = map[string]map[string]proc.Usage{}
	for prof, groups := range b.groups {
		b.o.Usage[prof] = map[string]proc.Usage{}
		for svc, pg := range groups {
			b.o.Usage[prof][svc] = proc.Group(pg)
		}
	}
	return nil
}
