package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/proc"
)

// The soak: the tuned stack's full page at a fixed, uniform rate for a long
// time (the plan's soak part; `bookload bench --soak` overrides its duration),
// with the resident memory of every service sampled at a fixed interval.
// Judged after its first third (a warm-up, soaktrend.go): the slope of the
// rest must meet soak_rss_slope_mb and the last third's highest reading
// soak_rss_step_mb over the second third's, for every service.

// QuickSoak is the soak of --quick.
const QuickSoak = 30 * time.Second

// SoakSample is one reading of every tuned service's RSS.
type SoakSample struct {
	At    time.Duration    // since the soak's start
	RSSkB map[string]int64 // service -> VmRSS summed over its process group
}

// Soak is the soak's measurement.
type Soak struct {
	Duration, Interval time.Duration
	Rate               float64
	Conns              int
	Samples            []SoakSample
	Measure            *Measure // latency, errors and CPU of the run
}

// slope is the least-squares slope of ys over xs; NaN with fewer than two
// distinct xs.
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 2 || len(xs) != len(ys) {
		return math.NaN()
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// Slope returns the least-squares slope of svc's RSS in MB per 10 minutes;
// svc "" is all services together.
func (s *Soak) Slope(svc string) float64 {
	if s == nil {
		return math.NaN()
	}
	var xs, ys []float64
	for _, smp := range s.Samples {
		xs = append(xs, smp.At.Minutes()/10)
		ys = append(ys, float64(s.kB(smp, svc))/1024)
	}
	return slope(xs, ys)
}

func (s *Soak) kB(smp SoakSample, svc string) int64 {
	if svc != "" {
		return smp.RSSkB[svc]
	}
	var sum int64
	for _, v := range smp.RSSkB {
		sum += v
	}
	return sum
}

// Known says there are enough samples for a slope (three or more).
func (s *Soak) Known() bool { return s != nil && len(s.Samples) >= 3 }

// soakInterval samples every tm.SoakSample, but at least five times.
func soakInterval(d, every time.Duration) time.Duration {
	if every <= 0 || d/4 < every {
		every = d / 4
	}
	return max(every, time.Second)
}

// measureSoak runs the full page at the part's rate on the tuned stack for
// cfg.Soak (uniform arrival, one repetition) while sampling every service's
// RSS. The samples start with measure's short warm-up at the same rate.
func measureSoak(ctx context.Context, b *bench, sp *Part) error {
	d := b.cfg.Soak
	if d <= 0 {
		return nil
	}
	so := &Soak{Duration: d, Interval: soakInterval(d, b.tm.SoakSample), Rate: sp.Load.QPS, Conns: sp.Load.Connections}
	b.o.Soak = so
	page := b.o.Plan.Page
	s := b.scenario("bench-soak", page.Service, page.Path, true, profile(so.Rate, so.Conns, d))
	s.Description = fmt.Sprintf("soak: full page at %g RPS for %v, RSS every %v, %s", so.Rate, d, so.Interval, pattern(true))
	s.Repetitions = 1

	groups := b.groups["tuned"]
	stop, done := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		sample := func() {
			smp := SoakSample{At: time.Since(start), RSSkB: map[string]int64{}}
			for svc, pg := range groups {
				smp.RSSkB[svc] = proc.Group(pg).RSSkB
			}
			so.Samples = append(so.Samples, smp)
		}
		sample()
		tick := time.NewTicker(so.Interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				sample()
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", page.Service)})
	close(stop)
	<-done
	so.Measure = m
	if so.Known() {
		var parts []string
		for _, svc := range local.Services {
			parts = append(parts, fmt.Sprintf("%s %+.2f", svc, so.Slope(svc)))
		}
		b.logf("soak: RSS slope in MB per 10 min: %s", strings.Join(parts, ", "))
	}
	return err
}

// soakView is the soak's section of BENCHMARKS.md.
type soakView struct {
	Part               string
	Run                bool
	Rate               float64
	Conns              int
	Duration, Interval time.Duration
	Bound, Load, Which string
	StepBound, Warmup  string
	Rows, Samples      [][]string
}

func (o *Outcome) soakView() soakView {
	so := o.Soak
	t, stepT := o.Plan.Targets.T("soak_rss_slope_mb"), o.Plan.Targets.T("soak_rss_step_mb")
	v := soakView{Rate: o.Plan.first("soak").Load.QPS, Bound: t.Value(), StepBound: stepT.Value()}
	if so == nil {
		return v
	}
	v.Run, v.Rate, v.Conns, v.Duration, v.Interval = true, so.Rate, so.Conns, so.Duration, so.Interval
	if r := so.Measure.Row(profile(so.Rate, so.Conns, 0).Name, "tuned"); r != nil {
		v.Load = fmt.Sprintf("Load: achieved %.1f RPS, %d errors, p50 %s ms, p99 %s ms, p99.9 %s ms; all services %s ms CPU per page.",
			r.QPS, r.Errors, ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]), ms(so.Measure.stackCPUPerReq("tuned")))
	}
	if !so.Known() || !so.Trend("").Known() {
		return v
	}
	v.Warmup = so.Trend("").WarmupEnd.Round(time.Second).String()
	for _, svc := range append(append([]string{}, local.Services...), "") {
		name := svc
		if svc == "" {
			name = "**all**"
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, smp := range so.Samples {
			x := float64(so.kB(smp, svc)) / 1024
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		first, last := so.Samples[0], so.Samples[len(so.Samples)-1]
		tr := so.Trend(svc)
		met := "-"
		if svc != "" {
			met = "**yes**"
			if tr.Leaks(t, stepT) {
				met = "no"
			}
		}
		v.Rows = append(v.Rows, []string{name, fmt.Sprintf("%.1f", float64(so.kB(first, svc))/1024), fmt.Sprintf("%.1f", float64(so.kB(last, svc))/1024),
			fmt.Sprintf("%.1f", lo), fmt.Sprintf("%.1f", hi), fmt.Sprintf("%+.2f", so.Slope(svc)),
			fmt.Sprintf("%+.2f", tr.Slope), fmt.Sprintf("%.1f", tr.SecondMax), fmt.Sprintf("%.1f", tr.LastMax), fmt.Sprintf("%+.1f", tr.Step()), met})
	}
	// The samples themselves, thinned to about a dozen rows.
	step := max(1, len(so.Samples)/12)
	v.Which = "every reading"
	if step > 1 {
		v.Which = fmt.Sprintf("one reading in %d, and the last", step)
	}
	for i, smp := range so.Samples {
		if i%step != 0 && i != len(so.Samples)-1 {
			continue
		}
		cells := []string{smp.At.Round(time.Second).String()}
		for _, svc := range local.Services {
			cells = append(cells, fmt.Sprintf("%.1f", float64(smp.RSSkB[svc])/1024))
		}
		v.Samples = append(v.Samples, append(cells, fmt.Sprintf("%.1f", float64(so.kB(smp, ""))/1024)))
	}
	return v
}
