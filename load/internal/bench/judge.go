package bench

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

// Verdict is one judged target: what was judged against which of the plan's
// targets, what was measured, whether it met them, and what limits it. The
// judge functions make them from measurements; markdown.go only shows them.
type Verdict struct {
	Part     string   // the plan part that measured it
	Targets  []string // the plan's targets it is judged on
	Subject  string   // what is judged, with the thresholds
	Measured string
	Known    bool // measured at all; Met means nothing without it
	Met      bool
	Analysis string // what limits it
}

// Judge judges every part that ran, in plan order.
func Judge(o *Outcome) []Verdict {
	var out []Verdict
	for _, name := range o.Ran {
		pt := o.Plan.Part(name)
		for _, v := range kinds[pt.Kind].judge(o, pt) {
			v.Part = pt.Name
			out = append(out, v)
		}
	}
	return out
}

// judgeEndpoint judges one route alone on the targets its part names.
func judgeEndpoint(o *Outcome, e *Part) []Verdict {
	var out []Verdict
	t := o.Plan.Targets
	bp := o.baseProfile()
	if e.Has("service_p50_floors") || e.Has("service_p999_ms") {
		floors, p999T := t.T("service_p50_floors"), t.T("service_p999_ms")
		for _, uniform := range []bool{true, false} {
			floor := lat(o.Floor[uniform].Row(bp, "echo"), "p50")
			m := o.Alone[e.Name][uniform]
			v := Verdict{Targets: []string{"service_p50_floors", "service_p999_ms"},
				Subject: fmt.Sprintf("%s alone %s, %s: p50 %s× floor (%s ms), p99.9 %s ms", e.Name, shortProfile(o.Plan.Base.Load), arrival(uniform), floors.Text(), ms(floor), p999T.Text())}
			if r := m.Row(bp, "tuned"); r != nil && !math.IsNaN(floor) {
				p50, p999 := r.LatencyMS["p50"], r.LatencyMS["p99.9"]
				v.Known, v.Met = true, floors.Met(p50/floor) && p999T.Met(p999)
				v.Measured = fmt.Sprintf("p50 %s ms (%.1f×), p99.9 %s ms; CPU %s ms/req", ms(p50), p50/floor, ms(p999), ms(m.stackCPUPerReq("tuned")))
				v.Analysis = o.serviceLimit(e, uniform, p50, floor, p999, m, lat(o.FloorProcess[uniform].Row(bp, "echo"), "p50"))
			}
			out = append(out, v)
		}
	}
	if e.Has("page_p50_ms") || e.Has("page_p99_ms") {
		p50T, p99T := t.T("page_p50_ms"), t.T("page_p99_ms")
		for _, uniform := range []bool{true, false} {
			m := o.Alone[e.Name][uniform]
			v := Verdict{Targets: []string{"page_p50_ms", "page_p99_ms"},
				Subject: fmt.Sprintf("full page %s, %s: p50 %s ms, p99 %s ms", shortProfile(o.Plan.Base.Load), arrival(uniform), p50T.Text(), p99T.Text())}
			if r := m.Row(bp, "tuned"); r != nil {
				p50, p99 := r.LatencyMS["p50"], r.LatencyMS["p99"]
				v.Known, v.Met = true, p50T.Met(p50) && p99T.Met(p99)
				v.Measured = fmt.Sprintf("p50 %s ms, p99 %s ms", ms(p50), ms(p99))
				v.Analysis = fmt.Sprintf("three hops in series-parallel (productpage → details ∥ reviews → ratings), %s ms of service CPU per page on 2 shared CPUs; see the analysis", ms(m.stackCPUPerReq("tuned")))
				if !uniform {
					v.Analysis = "the burst: 10 pages arrive together on 2 gunicorn workers, which queue them; " + v.Analysis
				}
			}
			out = append(out, v)
		}
	}
	if e.Has("legacy_details_p99_factor") {
		nagleT := t.T("legacy_details_p99_factor")
		m := o.Alone[e.Name][false]
		v := Verdict{Targets: []string{"legacy_details_p99_factor"},
			Subject: fmt.Sprintf("legacy %s p99 %s× tuned (the Nagle stall visible), burst", e.Name, nagleT.Text())}
		if lr, tr := m.Row(bp, "legacy"), m.Row(bp, "tuned"); lr != nil && tr != nil {
			f := lr.LatencyMS["p99"] / tr.LatencyMS["p99"]
			v.Known, v.Met = true, nagleT.Met(f)
			v.Measured = fmt.Sprintf("legacy p99 %s ms vs tuned %s ms: %.1f×", ms(lr.LatencyMS["p99"]), ms(tr.LatencyMS["p99"]), f)
			v.Analysis = "Nagle + delayed ACK: ~40 ms per stalled response on Linux loopback"
		}
		out = append(out, v)
	}
	return out
}

// serviceLimit says what keeps a service from its target. hop is the p50 of
// the echo server in a separate process (NaN when not measured).
func (o *Outcome) serviceLimit(e *Part, uniform bool, p50, floor, p999 float64, m *Measure, hop float64) string {
	var parts []string
	cpu := m.stackCPUPerReq("tuned")
	slow := !o.Plan.Targets.T("service_p50_floors").Met(p50 / floor)
	if e.Busy != nil {
		if busy := lat(o.AloneBusy[e.Name].Row(e.Busy.Profile(0).Name, "tuned"), "p50"); uniform && slow && !math.IsNaN(busy) {
			parts = append(parts, fmt.Sprintf("the idle wake-up: at %g RPS the same service answers in %s ms (%.1f× the floor)", e.Busy.QPS, ms(busy), busy/floor))
		}
	}
	if slow && !math.IsNaN(hop) {
		parts = append(parts, fmt.Sprintf("the process hop: the same echo server in a separate process answers in %s ms (%.1f× the floor) before any service code runs", ms(hop), hop/floor))
	}
	if slow {
		if !uniform {
			parts = append(parts, "the burst: 10 requests at once on a single-threaded server queue behind each other (p50 ≈ 5 service times)")
		} else {
			parts = append(parts, fmt.Sprintf("per-request service time: %s ms of CPU per request against the floor's %s ms latency", ms(cpu), ms(floor)))
		}
	}
	if !o.Plan.Targets.T("service_p999_ms").Met(p999) {
		parts = append(parts, "the tail: a stall of the process (GC, scheduler on 2 shared CPUs) lands in the slowest 1 in 1000")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

// judgeFramework judges each route's own CPU against its framework floor.
func judgeFramework(o *Outcome, _ *Part) []Verdict {
	var out []Verdict
	fwT := o.Plan.Targets.T("framework_factor")
	for _, fr := range o.FrameworkRows() {
		v := Verdict{Targets: []string{"framework_factor"}, Subject: fmt.Sprintf("%s `%s`: own CPU per request %s", fr.Service, fr.Path, allowanceText(fwT, fr.Upstream))}
		if fr.Known() {
			v.Known, v.Met = true, fwT.Met(fr.Excess())
			v.Measured = fmt.Sprintf("%s ms at %g RPS vs %s ms allowed (floor %s ms): %.2f× the floor", ms(float64(fr.CPU)), fr.Rate, ms(fr.Allowed()), ms(float64(fr.FloorCPU)), float64(fr.CPU/fr.FloorCPU))
			v.Analysis = "see the framework floor table and the analysis"
		}
		out = append(out, v)
	}
	return out
}

func allowanceText(t Target, upstream int) string {
	switch upstream {
	case 0:
		return fmt.Sprintf("%s× its framework floor", t.Text())
	case 1:
		return fmt.Sprintf("%s× its framework floor + 1 floor for its upstream call", t.Text())
	}
	return fmt.Sprintf("%s× its framework floor + %d floors for its upstream calls", t.Text(), upstream)
}

// judgeMaxRate judges the search's result and the CPU per page at it.
func judgeMaxRate(o *Outcome, _ *Part) []Verdict {
	t := o.Plan.Targets
	best, fail := o.MaxSustained()
	rateT := t.T("max_rate_rps")
	v := Verdict{Targets: []string{"max_rate_rps", "max_rate_p99_ms", "hold_fraction"},
		Subject: fmt.Sprintf("maximum sustainable full-page rate %s RPS (held %v, zero errors, p99 %s ms; uniform arrival)", rateT.Text(), o.Timing.Probe, t.T("max_rate_p99_ms").Text())}
	if len(o.MaxRate) > 0 {
		v.Known, v.Met = true, rateT.Met(best)
		v.Measured = maxRateText(best, fail)
		v.Analysis = o.maxRateLimit(fail)
	}
	out := []Verdict{v}

	cpuT := t.T("cpu_per_page_ms")
	v = Verdict{Targets: []string{"cpu_per_page_ms"}, Subject: fmt.Sprintf("CPU per full page %s ms at the maximum sustainable rate, all services together", cpuT.Text())}
	var at *Probe
	for i := range o.MaxRate {
		if o.MaxRate[i].OK(t) && (at == nil || o.MaxRate[i].Rate > at.Rate) {
			at = &o.MaxRate[i]
		}
	}
	if at == nil && len(o.MaxRate) > 0 {
		at = &o.MaxRate[0]
	}
	if at != nil && at.Measure != nil && at.Measure.Requests["tuned"] > 0 {
		c := at.Measure.stackCPUPerReq("tuned")
		v.Known, v.Met = true, cpuT.Met(c)
		v.Measured = fmt.Sprintf("%s ms at %g RPS (productpage %s, reviews %s, details %s, ratings %s)", ms(c), at.Rate,
			ms(at.Measure.cpuPerReq("tuned", "productpage")), ms(at.Measure.cpuPerReq("tuned", "reviews")), ms(at.Measure.cpuPerReq("tuned", "details")), ms(at.Measure.cpuPerReq("tuned", "ratings")))
		if m := o.pageMeasure(true); m != nil && m.Requests["tuned"] > 0 {
			v.Measured += fmt.Sprintf("; %s ms at %g RPS", ms(m.stackCPUPerReq("tuned")), o.Plan.Base.QPS)
		}
		v.Analysis = "interpreter and framework cost per request (Flask + Jinja + gevent in productpage, Spring MVC + Jackson in reviews); see the analysis"
	}
	return append(out, v)
}

func (o *Outcome) maxRateLimit(fail float64) string {
	for _, p := range o.MaxRate {
		if p.Rate != fail || p.Measure == nil || p.Row == nil {
			continue
		}
		why := []string{}
		if !p.Held(o.Plan.Targets) {
			why = append(why, fmt.Sprintf("achieved %.0f of %g RPS", p.Row.QPS, p.Rate))
		}
		if p.Row.Errors > 0 {
			why = append(why, fmt.Sprintf("%d errors", p.Row.Errors))
		}
		if !o.Plan.Targets.T("max_rate_p99_ms").Met(p.Row.LatencyMS["p99"]) {
			why = append(why, fmt.Sprintf("p99 %s ms", ms(p.Row.LatencyMS["p99"])))
		}
		return fmt.Sprintf("at %g RPS: %s, with %s: CPU-bound, the services' CPU per page times the rate, plus the load generator and other processes, fills the 2 CPUs",
			fail, strings.Join(why, ", "), busyText(p.Measure))
	}
	return "-"
}

// judgeMemory judges the tuned stack's peak resident memory.
func judgeMemory(o *Outcome, _ *Part) []Verdict {
	var hwm int64
	for _, u := range o.Usage["tuned"] {
		hwm += u.HWMkB
	}
	rssT := o.Plan.Targets.T("total_rss_mb")
	v := Verdict{Targets: []string{"total_rss_mb"}, Subject: fmt.Sprintf("total RSS %s MB (peak, all tuned services)", rssT.Text())}
	if hwm > 0 {
		v.Known, v.Met = true, rssT.Met(float64(hwm)/1024)
		v.Measured = fmt.Sprintf("%.0f MB (reviews' JVM %.0f MB)", float64(hwm)/1024, float64(o.Usage["tuned"]["reviews"].HWMkB)/1024)
		v.Analysis = "the JVM's heap and code cache dominate"
	}
	return []Verdict{v}
}

// judgeSoak judges every service's RSS after the soak's warm-up third
// (soaktrend.go): its slope, and the last third's new high over the second's.
func judgeSoak(o *Outcome, sp *Part) []Verdict {
	so := o.Soak
	slopeT, stepT := o.Plan.Targets.T("soak_rss_slope_mb"), o.Plan.Targets.T("soak_rss_step_mb")
	v := Verdict{Targets: []string{"soak_rss_slope_mb", "soak_rss_step_mb"},
		Subject: fmt.Sprintf("soak: after the warm-up third, RSS slope %s MB per 10 min and last third's max %s MB over the second's, for every service (full page at %g RPS, uniform)", slopeT.Text(), stepT.Text(), sp.Load.QPS)}
	if !so.Known() || !so.Trend("").Known() {
		v.Measured = "not run (`--soak 0`) or too few samples after the warm-up"
		return []Verdict{v}
	}
	v.Known, v.Met = true, true
	var parts, over []string
	for _, svc := range local.Services {
		tr := so.Trend(svc)
		parts = append(parts, fmt.Sprintf("%s %+.2f/%+.1f", svc, tr.Slope, tr.Step()))
		if tr.Leaks(slopeT, stepT) {
			v.Met = false
			over = append(over, svc)
		}
	}
	v.Measured = fmt.Sprintf("slope MB per 10 min / step MB: %s, after the first %v of %v (%d samples)", strings.Join(parts, ", "), so.Trend("").WarmupEnd.Round(time.Second), so.Duration, len(so.Samples))
	if v.Met {
		v.Analysis = "no growth beyond the bounds after the warm-up: the resident sets settle"
	} else {
		v.Analysis = "still growing after the warm-up: " + strings.Join(over, ", ") + " (see the soak's samples)"
	}
	return []Verdict{v}
}
