package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fortio.org/fortio/fhttp"
	flog "fortio.org/log"
	"gopkg.in/yaml.v3"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// A scenario part runs one of the published mesh experiments of scenarios/
// (echo-h1, throughput-1c, matrix-details, ...) with the plan's shorter
// repetitions: every profile of the file at its rate and connections, each
// repetition the part's duration, the part's number of times. Against
// fortio's echo server in this process when the scenario's service is echo,
// else against the stacks named in against: (target name -> stack profile).
// Reported (BENCHMARKS.md, the HTML report), judged only on a target it
// names: hold_fraction, every point holding its rate.

var (
	scenarioFields  = []string{"scenario", "duration", "repetitions", "against", "targets"}
	scenarioTargets = []string{"hold_fraction"}
)

// scenarioSpec is a scenario part's own fields.
type scenarioSpec struct {
	File        string // the scenario file, beside the plan's folder in scenarios/
	Scenario    *scenario.Scenario
	Repetitions int
	Against     []againstTarget // in the plan's order; the first is the baseline
}

type againstTarget struct{ Name, Stack string }

// settingKnobs is what each matrix setting (the SETTING of a MODE.SETTING
// target, scenarios/README.md) sets on its service: a stack stands for a
// setting only if its profile sets exactly these knobs there.
var settingKnobs = map[string]map[string]string{
	"nodelay":      {},
	"nagle":        {"HTTP_NODELAY": "false"},
	"server-close": {"HTTP_KEEPALIVE": "false"},
}

func parseScenario(r *reader, f map[string]*yaml.Node, path string, pt *Part) {
	sp := &scenarioSpec{}
	pt.Spec = sp
	if n := f["scenario"]; n != nil {
		name := r.str(n, path+".scenario")
		sp.File = filepath.Join(filepath.Dir(filepath.Dir(r.file)), "scenarios", name+".yaml")
		s, err := scenario.Load(sp.File)
		if err != nil {
			r.fail(n, path+".scenario", "%q: %v", name, err)
		}
		sp.Scenario = s
	}
	if n := f["repetitions"]; n != nil {
		sp.Repetitions = r.integer(n, path+".repetitions", 2)
	}
	if n := f["against"]; n != nil {
		if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
			r.fail(n, path+".against", "must be a mapping of target name (MODE.SETTING) to stack profile (%s)", strings.Join(slices.Sorted(maps.Keys(local.Profiles)), ", "))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			field := path + ".against." + k.Value
			a := againstTarget{Name: k.Value, Stack: r.str(v, field)}
			sp.Against = append(sp.Against, a)
			if _, ok := local.Profiles[a.Stack]; !ok {
				r.fail(v, field, "no stack profile %q (have: %s)", a.Stack, strings.Join(slices.Sorted(maps.Keys(local.Profiles)), ", "))
				continue
			}
			if sp.Scenario != nil {
				if err := standsFor(a, sp.Scenario.Service); err != nil {
					r.fail(v, field, "%v", err)
				}
			}
		}
	}
	if sp.Scenario != nil && (sp.Scenario.Service == scenario.Echo) == (len(sp.Against) > 0) {
		r.fail(f["scenario"], path+".against", "an echo scenario runs against fortio's echo server in this process (no against:); a scenario of a service needs against:")
	}
}

// standsFor checks that the stack's profile sets on service exactly the
// knobs of the setting that a.Name names (legacy details is Nagle on and
// nothing else, so it stands for no-mesh.nagle).
func standsFor(a againstTarget, service string) error {
	_, setting, ok := strings.Cut(a.Name, ".")
	want, known := settingKnobs[setting]
	if !ok || !known {
		return fmt.Errorf("target %q: want MODE.SETTING with SETTING one of %s", a.Name, strings.Join(slices.Sorted(maps.Keys(settingKnobs)), ", "))
	}
	if got := local.Profiles[a.Stack][service]; !maps.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
		return fmt.Errorf("target %q: the %s stack sets %v on %s, the setting %q is %v", a.Name, a.Stack, got, service, setting, want)
	}
	return nil
}

// scenarioStacks says whether a scenario part needs the stacks.
func scenarioStacks(pt *Part) bool { return len(pt.Spec.(*scenarioSpec).Against) > 0 }

// measureScenario runs the part's scenario once through the runner.
func measureScenario(ctx context.Context, b *bench, pt *Part) error {
	sp := pt.Spec.(*scenarioSpec)
	s := *sp.Scenario
	d, reps := pt.Duration, sp.Repetitions
	if b.cfg.Quick {
		d, reps = b.tm.Rep, b.tm.Reps
	}
	s.Name, s.Repetitions, s.Warmup = "bench-"+pt.Name, reps, 0 // measure warms each target up
	s.Profiles = slices.Clone(s.Profiles)
	for i := range s.Profiles {
		s.Profiles[i].Duration = scenario.Duration(d)
	}
	var targets []loadtarget.Target
	baseline := ""
	if len(sp.Against) == 0 {
		flog.SetLogLevelQuiet(flog.Critical)
		_, addr := fhttp.ServeTCP("127.0.0.1:0", "")
		if addr == nil {
			return errors.New("could not start fortio's echo server on loopback")
		}
		targets = append(targets, loadtarget.Target{Name: "echo", URL: "http://" + addr.String()})
	}
	for _, a := range sp.Against {
		t := b.targetOf(a.Stack, s.Service)
		t.Name = a.Name
		targets = append(targets, t)
	}
	if len(sp.Against) > 0 {
		baseline = sp.Against[0].Name
	}
	m, err := b.measure(ctx, &s, targets)
	if err != nil {
		return err
	}
	if baseline != "" { // the interactions need the MODE.SETTING baseline
		loaded, err := results.Open(m.Dir)
		if err != nil {
			return err
		}
		if m.Table, err = compare.Build([]*results.Loaded{loaded}, compare.Options{Baseline: baseline}); err != nil {
			return err
		}
	}
	if b.o.Scenarios == nil {
		b.o.Scenarios = map[string]*Measure{}
	}
	b.o.Scenarios[pt.Name] = m
	return nil
}

// judgeScenario judges a scenario part on hold_fraction if it names it:
// every point of every target held its rate.
func judgeScenario(o *Outcome, pt *Part) []Verdict {
	if !pt.Has("hold_fraction") {
		return nil
	}
	t := o.Plan.Targets.T("hold_fraction")
	v := Verdict{Targets: []string{"hold_fraction"}, Subject: fmt.Sprintf("%s: every point holds its rate (achieved/offered %s)", pt.Name, t.Text())}
	m := o.Scenarios[pt.Name]
	if m == nil || m.Table == nil || len(m.Table.Rows) == 0 {
		return []Verdict{v}
	}
	v.Known, v.Met = true, true
	worst, at := math.Inf(1), ""
	for _, r := range m.Table.Rows {
		f := r.QPS / r.TargetQPS
		if f < worst {
			worst, at = f, r.Profile+" "+r.Target
		}
		if !t.Met(f) || r.Errors > 0 {
			v.Met = false
		}
	}
	v.Measured = fmt.Sprintf("lowest %.3f (%s) over %d points", worst, at, len(m.Table.Rows))
	v.Analysis = "-"
	if !v.Met {
		v.Analysis = "the load generator and the echo server share bookload's process and the 2 CPUs: the generator, not the server, sets the pace"
	}
	return []Verdict{v}
}

// scenarioSection is the part's section of BENCHMARKS.md: its rows, its
// throughput and its interactions as bookload compare states them.
func scenarioSection(o *Outcome, pt *Part) string {
	sp := pt.Spec.(*scenarioSpec)
	var b strings.Builder
	fmt.Fprintf(&b, "## Published experiment: %s\n\n%s (`scenarios/%s`; where it comes from: `scenarios/README.md`). ", pt.Name, sp.Scenario.Description, filepath.Base(sp.File))
	fmt.Fprintf(&b, "Here each point runs %d repetitions of %v (the file's: %d of %v), interleaved across targets", sp.Repetitions, pt.Duration, sp.Scenario.Repetitions, time.Duration(sp.Scenario.Profiles[0].Duration))
	if len(sp.Against) == 0 {
		b.WriteString(", against fortio's echo server in bookload's process (load generator and server share it and the 2 CPUs).\n\n")
	} else {
		var as []string
		for _, a := range sp.Against {
			as = append(as, fmt.Sprintf("`%s` = the %s stack's %s", a.Name, a.Stack, sp.Scenario.Service))
		}
		fmt.Fprintf(&b, ", against %s (no mesh: the only mode locally).\n\n", strings.Join(as, ", "))
	}
	m := o.Scenarios[pt.Name]
	if m == nil || m.Table == nil {
		b.WriteString("Not run.\n")
		return b.String()
	}
	b.WriteString("Medians over the repetitions, ms; ± is the larger half of the median's interval (`bookload compare`).\n\n")
	b.WriteString("| profile | target | n | offered RPS | achieved | errors | p50 | p99 | p99.9 |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	rows := m.Table.Rows
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %g | %.1f | %d | %s%s | %s%s | %s |\n", r.Profile, r.Target, r.N, r.TargetQPS, r.QPS, r.Errors,
			ms(r.LatencyMS["p50"]), compare.Spread(r.LatencyMS["p50"], r.LatencyCIMS["p50"]), ms(r.LatencyMS["p99"]), compare.Spread(r.LatencyMS["p99"], r.LatencyCIMS["p99"]), ms(r.LatencyMS["p99.9"]))
	}
	b.WriteString("\n")
	for _, r := range rows {
		if tp := r.Throughput; tp != nil && tp.GbitPerS != nil {
			fmt.Fprintf(&b, "- Throughput, %s %s: %s Gbit/s; bookload's process (load generator and echo server) %s CPU-seconds per Gbit (cores busy per Gbit/s).\n",
				r.Profile, r.Target, tp.GbitPerS.Format(2), tp.ProcessCoresPerGbit.Format(3))
		}
	}
	for _, r := range rows {
		for _, metric := range compare.InteractionLineMetrics {
			if d, ok := r.Difference[metric]; ok && !r.Baseline {
				fmt.Fprintf(&b, "- The setting's effect, %s − %s at %s, %s: %s ms (mean of %d paired repetitions, %.0f%% interval)\n",
					r.Target, m.Table.Baseline, r.Profile, metric, compare.DiffCell(d), d.Pairs, 100*d.Confidence)
			}
		}
	}
	for _, in := range m.Table.Interactions {
		for _, metric := range compare.InteractionLineMetrics {
			if im, ok := in.Metrics[metric]; ok {
				fmt.Fprintf(&b, "- %s\n", im.Line)
			}
		}
	}
	if len(sp.Against) > 0 && len(m.Table.Interactions) == 0 {
		b.WriteString("- No interaction line: it needs a second mode (a mesh), which only a cluster has (`scripts/mesh-compare.sh`).\n")
	}
	return b.String()
}
