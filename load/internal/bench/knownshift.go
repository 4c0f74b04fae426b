package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/registry"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/throughput"
)

// A known-shift part is the known answer on the full page: two pass-through
// proxies (`bookload delay-proxy`, processes of their own) that hold each
// request for two set delays, in front of the tuned stack's productpage,
// interleaved and repeated until the client → productpage hop's p50
// difference has a confidence sequence within ±precision or the budget is
// spent (`bookload run --until-decided --part-precision hop:client=...`).
// The answer is known: the difference of the delays the two proxies report
// having held. Judged on known_shift_ms: the hop's interval holds the known
// difference and is no wider than ± the target, no other part of the
// waterfall moves by more than that, and the page's p50 interval holds it.

var (
	knownShiftFields   = []string{"load", "delays", "precision", "budget", "targets"}
	knownShiftRequired = []string{"load", "delays", "precision", "budget"}
	knownShiftTargets  = []string{"known_shift_ms"}
)

// knownShiftSpec is a known-shift part's own fields.
type knownShiftSpec struct {
	Delays    [2]time.Duration
	Precision time.Duration
	Budget    time.Duration
}

// KnownShift is what a known-shift part measured.
type KnownShift struct {
	Measure *Measure
	// Held is each proxy's mean hold, as it reports it; KnownMS their
	// difference, the answer.
	Held    [2]time.Duration
	KnownMS float64
	// P50 is the page's p50 difference (second proxy - first), with its
	// interval; ClientHop the same for the client → productpage hop and
	// OtherHopsMS the largest |difference| of any other part at p50.
	P50         *compare.Difference
	ClientHop   *compare.Difference
	OtherHopsMS float64
	Stopped     string // why the run stopped (run.json)
}

func parseKnownShift(r *reader, f map[string]*yaml.Node, path string, pt *Part) {
	sp := &knownShiftSpec{}
	pt.Spec = sp
	if n := f["delays"]; n != nil {
		if n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
			r.fail(n, path+".delays", "must be a list of two durations, the smaller first, e.g. [200us, 500us]")
		} else {
			for i, d := range n.Content {
				sp.Delays[i] = r.duration(d, fmt.Sprintf("%s.delays[%d]", path, i), true)
			}
			if sp.Delays[0] >= sp.Delays[1] {
				r.fail(n, path+".delays", "the first delay must be the smaller, got %v and %v", sp.Delays[0], sp.Delays[1])
			}
		}
	}
	if n := f["precision"]; n != nil {
		sp.Precision = r.duration(n, path+".precision", false)
	}
	if n := f["budget"]; n != nil {
		sp.Budget = r.duration(n, path+".budget", false)
	}
}

// measureKnownShift starts the two proxies in front of the tuned
// productpage and runs the page through both at once until pinned.
func measureKnownShift(ctx context.Context, b *bench, pt *Part) error {
	sp := pt.Spec.(*knownShiftSpec)
	page := b.targetOf("tuned", b.o.Plan.Page.Service)
	var proxies [2]*delayProxy
	var targets []loadtarget.Target
	for i, d := range sp.Delays {
		p, err := startDelayProxy(page.URL, d, pt.Load.Connections)
		if err != nil {
			return err
		}
		defer func() { _, _ = p.stop() }() // a no-op once stopped below
		proxies[i] = p
		targets = append(targets, loadtarget.Target{Name: fmt.Sprintf("delay-%gms", float64(d)/float64(time.Millisecond)), URL: p.url})
	}
	budget, d := sp.Budget, pt.Load.Duration
	if b.cfg.Quick {
		budget, d = 15*time.Second, b.tm.Rep
	}
	s := b.scenario("bench-"+pt.Name, b.o.Plan.Page.Service, b.o.Plan.Page.Path, true, pt.Load.Profile(d))
	s.Description = fmt.Sprintf("the full page through two delay proxies (%v, %v) in front of the tuned stack", sp.Delays[0], sp.Delays[1])
	s.Warmup = 0
	for _, t := range targets { // the proxies' connections and the page's caches
		w := pt.Load.Profile(b.tm.Warmup)
		if _, err := (&fortioengine.Engine{}).Run(ctx, engine.Request{Scenario: s, Profile: w, Target: t}, nil); err != nil {
			return fmt.Errorf("%s warmup of %s: %w", pt.Name, t.Name, err)
		}
	}
	parts := map[string]float64{"hop:" + hops.ClientHop: float64(sp.Precision) / float64(time.Millisecond)}
	rule := compare.StopRule{Baseline: targets[0].Name, Parts: parts}
	b.logf("%s: %s, until the client hop's p50 difference is within ±%v (budget %v)", s.Name, s.Description, sp.Precision, budget)
	res, err := runner.Run(ctx, runner.Config{
		Scenario: s, Targets: targets, Out: b.cfg.Out, Progress: b.cfg.Progress,
		Labels:    map[string]string{"bench": "true"},
		EngineFor: throughput.Wrap(registry.ByScheme, fortioengine.Name),
		Until:     rule.Until(), Budget: budget,
		Sequential: &results.Sequential{Baseline: targets[0].Name, PartsPrecisionMS: parts, BudgetSeconds: budget.Seconds()},
	})
	if res != nil {
		b.o.Dirs = append(b.o.Dirs, res.Dir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	ks := &KnownShift{Measure: &Measure{Name: s.Name, Dir: res.Dir}}
	for i, p := range proxies {
		if ks.Held[i], err = p.stop(); err != nil {
			return err
		}
	}
	ks.KnownMS = float64(ks.Held[1]-ks.Held[0]) / float64(time.Millisecond)
	loaded, err := results.Open(res.Dir)
	if err != nil {
		return err
	}
	if sq := loaded.Run.Sequential; sq != nil {
		ks.Stopped, _, _ = strings.Cut(sq.Stopped[s.Profiles[0].Name], "; still open")
	}
	if ks.Measure.Table, err = compare.Build([]*results.Loaded{loaded}, compare.Options{Baseline: targets[0].Name}); err != nil {
		return err
	}
	ks.read(targets[1].Name)
	b.o.KnownShift = ks
	return nil
}

// read takes the p50 differences from the table: the page's and each part
// of its waterfall.
func (ks *KnownShift) read(target string) {
	t := ks.Measure.Table
	for _, r := range t.Rows {
		if r.Target == target {
			if d, ok := r.Difference["p50"]; ok {
				ks.P50 = &d
			}
		}
	}
	for _, w := range t.Waterfalls {
		for _, wt := range w.Targets {
			if wt.Target != target {
				continue
			}
			for _, sp := range wt.Splits {
				if sp.Metric != "p50" {
					continue
				}
				for _, seg := range sp.Segments {
					switch {
					case seg.Difference == nil:
					case seg.Key == "hop:"+hops.ClientHop:
						ks.ClientHop = seg.Difference
					default:
						ks.OtherHopsMS = math.Max(ks.OtherHopsMS, math.Abs(seg.Difference.MeanMS))
					}
				}
			}
		}
	}
}

// judgeKnownShift: found (the interval holds the known difference), as
// narrow as the target, and on the client hop (its difference within the
// precision of the known one, every other part's within it of zero).
func judgeKnownShift(o *Outcome, pt *Part) []Verdict {
	if !pt.Has("known_shift_ms") {
		return nil
	}
	t := o.Plan.Targets.T("known_shift_ms")
	sp := pt.Spec.(*knownShiftSpec)
	v := Verdict{Targets: []string{"known_shift_ms"}, Subject: fmt.Sprintf(
		"%s: two delay proxies %v apart in front of the full page, found on the client → productpage hop at p50: its interval holds the proxies' own difference, half-width %s, the page's p50 interval holds it too",
		pt.Name, sp.Delays[1]-sp.Delays[0], t.Text())}
	ks := o.KnownShift
	if ks == nil || ks.P50 == nil || ks.P50.CIMS == nil || ks.ClientHop == nil || ks.ClientHop.CIMS == nil {
		return []Verdict{v}
	}
	hop, page := ks.ClientHop.CIMS, ks.P50.CIMS
	half := (hop[1] - hop[0]) / 2
	holds := func(ci *[2]float64) bool { return ci[0] <= ks.KnownMS && ks.KnownMS <= ci[1] }
	v.Known, v.Met = true, holds(hop) && holds(page) && t.Met(half) && ks.OtherHopsMS <= t.Threshold
	v.Measured = fmt.Sprintf("known %s ms; client hop %s ms [%s, %s] (±%s), other parts within %s ms; the page's p50 %s ms [%s, %s]; %s",
		ms(ks.KnownMS), ms(ks.ClientHop.MeanMS), ms(hop[0]), ms(hop[1]), ms(half), ms(ks.OtherHopsMS),
		ms(ks.P50.MeanMS), ms(page[0]), ms(page[1]), ks.Stopped)
	v.Analysis = "-"
	switch {
	case !holds(hop) || !holds(page):
		v.Analysis = "an interval misses the known difference: a bias between the two paths (or the 5% the interval allows)"
	case !t.Met(half):
		v.Analysis = "the budget ran out before the hop's interval was this narrow"
	case ks.OtherHopsMS > t.Threshold:
		v.Analysis = "the waterfall puts part of the shift elsewhere than on the client's hop"
	}
	return []Verdict{v}
}

// knownShiftSection is the part's section of BENCHMARKS.md.
func knownShiftSection(o *Outcome, pt *Part) string {
	sp := pt.Spec.(*knownShiftSpec)
	var b strings.Builder
	fmt.Fprintf(&b, "## Known answer: %v in front of the full page\n\n", sp.Delays[1]-sp.Delays[0])
	fmt.Fprintf(&b, "Two `bookload delay-proxy` processes hold each request %v and %v (a busy wait) before passing it to the tuned stack's productpage; "+
		"each is loaded in turn at %g RPS over %d connections, uniform arrival, in repetitions of %v, until the client → productpage hop's p50 difference has an "+
		"anytime-valid confidence sequence within ±%v or %v are spent. The answer is known: the difference of the holds the proxies report.\n\n",
		sp.Delays[0], sp.Delays[1], pt.Load.QPS, pt.Load.Connections, pt.Load.Duration, sp.Precision, sp.Budget)
	ks := o.KnownShift
	if ks == nil || ks.P50 == nil {
		b.WriteString("Not run.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "- Known: the proxies held %v and %v on average: %s ms apart.\n", ks.Held[0], ks.Held[1], ms(ks.KnownMS))
	if ks.ClientHop != nil {
		fmt.Fprintf(&b, "- Found on the client → productpage hop at p50: %s ms (mean of %d pairs [confidence sequence])\n", compare.DiffCell(*ks.ClientHop), ks.ClientHop.Pairs)
	}
	fmt.Fprintf(&b, "- The page's p50: %s\n", ks.P50.Line)
	fmt.Fprintf(&b, "- Every other part of the waterfall at p50 moved by at most %s ms.\n- Stopped: %s.\n", ms(ks.OtherHopsMS), ks.Stopped)
	return b.String()
}

// delayProxy is `bookload delay-proxy`, a child process of its own.
type delayProxy struct {
	*child
	done bool
	held time.Duration
}

func startDelayProxy(to string, delay time.Duration, conns int) (*delayProxy, error) {
	c, err := startSelf("delay-proxy", "--listen", "127.0.0.1:0", "--to", to, "--delay", delay.String(), "--connections", fmt.Sprint(conns))
	if err != nil {
		return nil, err
	}
	return &delayProxy{child: c}, nil
}

// stop ends the proxy and returns its mean hold, as it reports it; again
// after the first, it returns the same.
func (p *delayProxy) stop() (time.Duration, error) {
	if p.done {
		return p.held, nil
	}
	p.done = true
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	line, _ := p.out.ReadString('\n')
	_ = p.cmd.Wait()
	_, mean, ok := strings.Cut(strings.TrimSpace(line), ", mean ")
	d, err := time.ParseDuration(mean)
	if !ok || err != nil {
		return 0, fmt.Errorf("bookload delay-proxy did not report its hold (got %q, stderr %q)", line, p.stderr.String())
	}
	p.held = d
	return d, nil
}
