package bench

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// analysis is the hand-written part of BENCHMARKS.md: where the time goes
// (profiles) and the next step. It changes when the apps do, not per run.
//
//go:embed analysis.md
var analysis string

func bytesFields(b []byte) []string { return strings.Fields(string(b)) }

// WriteReport calls `bookload report` on the bench's runs. A bookload
// without the report command is no error: the note says it was skipped.
func WriteReport(o *Outcome, cfg Config) {
	path := cfg.Report
	if path == "" {
		path = cfg.Out + "/report.html"
	}
	if cfg.Bookload == "" || len(o.Dirs) == 0 {
		o.ReportNote = "skipped: no runs or no bookload binary"
		return
	}
	args := append([]string{"report"}, o.Dirs...)
	args = append(args, "-o", path, "--baseline", "legacy", "--title", "bookload bench: tuned vs legacy local stacks")
	out, err := exec.Command(cfg.Bookload, args...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "unknown command") {
			o.ReportNote = "skipped: this bookload has no `report` command yet"
		} else {
			o.ReportNote = fmt.Sprintf("`bookload report` failed: %v: %s", err, lastLine(msg))
		}
		return
	}
	o.Report = path
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// verdict is one target of the issue.
type verdict struct {
	target, measured, limit string
	met                     bool
	known                   bool
}

func ms(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func lat(r *compare.Row, metric string) float64 {
	if r == nil {
		return math.NaN()
	}
	return r.LatencyMS[metric]
}

func (m *Measure) cpuPerReq(profile, svc string) float64 {
	if m == nil || m.Requests[profile] == 0 {
		return math.NaN()
	}
	return m.CPU[profile][svc] / float64(m.Requests[profile]) * 1000
}

func (m *Measure) stackCPUPerReq(profile string) float64 {
	var sum float64
	for _, svc := range local.Services {
		sum += m.cpuPerReq(profile, svc)
	}
	return sum
}

// Write writes BENCHMARKS.md.
func Write(w io.Writer, o *Outcome, cfg Config) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	mach := results.CurrentMachine()
	tool := results.CurrentTool()
	p("# Benchmarks\n\n")
	p("Written by `%s` (`make bench`), %s to %s UTC. Do not edit by hand: the\n", cfg.Command, o.Started.UTC().Format("2006-01-02 15:04"), o.Finished.UTC().Format("15:04"))
	p("numbers are rewritten on every run; the analysis at the end is\n`load/internal/bench/analysis.md`.\n\n")
	if cfg.Quick {
		p("> **QUICK RUN** (`--quick`): seconds per measurement, for checking the suite; the numbers mean nothing.\n\n")
	}
	if busy := o.busyReasons(mach.CPUs); busy != "" {
		p("> **The machine was busy** (%s): other processes competed for the CPUs, so latencies are upper bounds and rates lower bounds; re-run on a quiet machine before comparing.\n\n", busy)
	}
	if slower := slowerText(o.Speed); slower != "" {
		p("> **The host was slower during part of the bench** (speed check below: %s). Another tenant of the host took CPU time, cache or memory bandwidth from this virtual machine; what was measured around the slow readings is slower than the code, so compare runs only with their speed checks in view.\n\n", slower)
	}
	p("- **Machine**: %s, %d CPUs, Linux %s, load average %s at the start and %s at the end (a shared machine: other jobs run beside the bench)\n",
		mach.CPUModel, mach.CPUs, mach.Kernel, o.LoadStart, o.LoadEnd)
	if len(o.Speed) > 0 {
		p("- **Host speed check** (both stacks idle; CPU time of one thread, median of %d; on a quiet host every reading is the same): SHA-256 of %d MiB in ms, and ns per load of a dependent random walk through %d MiB. %s\n",
			speedRounds, hashBytes>>20, chaseWords*4>>20, speedText(o.Speed))
	}
	p("- **Tools**: bookload %s, fortio %s, %s; the load generator runs on the same 2 CPUs as the services (\"load generator included\")\n", tool.Bookload, tool.Fortio, tool.Go)
	p("- **Stacks**: `bookload local up --detach --profile tuned --port-base %d` and `--profile legacy --port-base %d`, reviews v2\n", o.Stacks[0].PortBase, o.Stacks[1].PortBase)
	p("- **Warm-up**: each stack first serves the full page at %g RPS for %v (JIT, caches), not recorded\n", StackWarmupRate, o.Timing.StackWarmup)
	p("- **Method**: each row is the median of %d interleaved repetitions of %v (legacy and tuned alternate), after a %v warm-up per target;\n", o.Timing.Reps, o.Timing.Rep, o.Timing.Warmup)
	p("  latency from each request's send (fortio's client, HdrHistogram µs); p99.9 of %d requests per repetition is close to its maximum.\n", int(100*o.Timing.Rep.Seconds()))
	p("- **Arrival**: *burst* is fortio's default (every connection sends at the same instant, once per period: at 100/10, 10 requests together every 100 ms);\n")
	p("  *uniform* is the scenario field `uniform: true` (fortio -uniform: one request every 10 ms). Single-threaded servers queue a burst, so burst p50 measures that queue.\n")
	p("- **Runs**: `%s` (every run directory; `bookload compare %s` re-reads them)\n", cfg.Out, cfg.Out)
	if o.Report != "" {
		p("- **HTML report**: `%s`\n", o.Report)
	} else {
		p("- **HTML report**: %s\n", o.ReportNote)
	}
	p("\n")

	verdicts := o.verdicts()
	p("## Targets (tuned profile)\n\n| target | measured | met | what limits it |\n|---|---|:-:|---|\n")
	for _, v := range verdicts {
		mark := "no"
		if !v.known {
			mark = "?"
		} else if v.met {
			mark = "**yes**"
		}
		p("| %s | %s | %s | %s |\n", v.target, v.measured, mark, v.limit)
	}

	p("\n## Latency at 100 RPS over 10 connections\n\n")
	p("Medians over the repetitions, ms. CPU/req: CPU time of the service process group(s) per request, from /proc (the service itself and what it calls; idle time of the run included).\n\n")
	p("| endpoint | arrival | stack | qps | errors | p50 | p90 | p99 | p99.9 | max p50 vs floor | CPU/req ms |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, uniform := range []bool{false, true} {
		f := o.Floor[uniform]
		if r := f.Row("100rps-10c", "echo"); r != nil {
			p("| floor: fortio echo (in-process) | %s | - | %.1f | %d | %s | %s | %s | %s | 1.0× | %s (bookload: client + server) |\n",
				arrival(uniform), r.QPS, r.Errors, ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
				ms(f.Self/float64(max(1, f.Requests["echo"]))*1000))
		}
		f = o.FloorProcess[uniform]
		if r := f.Row("100rps-10c", "echo"); r != nil {
			p("| fortio echo in a separate process (`bookload echo`): the process hop alone | %s | - | %.1f | %d | %s | %s | %s | %s | %.1f× | %s (the echo process) |\n",
				arrival(uniform), r.QPS, r.Errors, ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
				r.LatencyMS["p50"]/lat(o.Floor[uniform].Row("100rps-10c", "echo"), "p50"),
				ms(f.Server/float64(max(1, f.Requests["echo"]))*1000))
		}
	}
	for _, uniform := range []bool{false, true} {
		floor := lat(o.Floor[uniform].Row("100rps-10c", "echo"), "p50")
		for _, a := range Alone {
			m := o.Alone[a.Key][uniform]
			for _, st := range []string{"legacy", "tuned"} {
				r := m.Row("100rps-10c", st)
				if r == nil {
					continue
				}
				p("| %s `%s` | %s | %s | %.1f | %d | %s | %s | %s | %s | %.1f× | %s |\n", a.Title, a.Path, arrival(uniform), st, r.QPS, r.Errors,
					ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
					r.LatencyMS["p50"]/floor, ms(m.stackCPUPerReq(st)))
			}
		}
	}

	if len(o.AloneBusy) > 0 {
		p("\n## Each service alone at %g RPS over 10 connections (tuned, uniform)\n\n", BusyRate)
		p("The same requests at ten times the rate. At 100 RPS every request finds the service's process asleep (and often its CPU idle); here the next request arrives within a millisecond, so the wake-ups and cold caches that dominate the 100 RPS latency are mostly gone.\n\n")
		p("| service | qps | errors | p50 | p90 | p99 | p99.9 | p50 vs floor | p50 at 100 RPS | CPU/req ms (at 100 RPS) |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		floor := lat(o.Floor[true].Row("100rps-10c", "echo"), "p50")
		for _, a := range Alone[:3] {
			m := o.AloneBusy[a.Key]
			r := m.Row(busyProfile, "tuned")
			if r == nil {
				continue
			}
			slow := o.Alone[a.Key][true]
			p("| %s `%s` | %.1f | %d | %s | %s | %s | %s | %.1f× | %s | %s (%s) |\n", a.Title, a.Path, r.QPS, r.Errors,
				ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
				r.LatencyMS["p50"]/floor, ms(lat(slow.Row("100rps-10c", "tuned"), "p50")),
				ms(m.stackCPUPerReq("tuned")), ms(slow.stackCPUPerReq("tuned")))
		}
	}

	writeFramework(p, o)
	writeBeforeAfter(p, o)

	p("\n## Full page over the ladder (burst arrival, %v per rung, one repetition)\n\n", o.Timing.LadderStep)
	p("A stack leaves the ladder at the first rung it cannot hold (achieved rate below %.0f%% of the offered one, or errors).\n\n", HoldFraction*100)
	p("| offered RPS | connections | stack | achieved | errors | p50 | p90 | p99 | p99.9 | machine CPU busy |\n|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, pr := range o.Ladder {
		probeRow(p, pr)
	}

	best, fail := o.MaxSustained()
	p("\n## Maximum sustainable full-page rate (tuned, uniform arrival)\n\n")
	p("Probes of %v each, rate/10 connections as on the ladder, uniform arrival (in bursts, rate/10 pages arrive at once every 100 ms and p99 measures that queue):\n", o.Timing.Probe)
	p("held (≥ %.0f%% of the offered rate), zero errors and p99 < %.0f ms. The search starts at %.0f RPS and moves up or bisects down (50 RPS grid, at most %d probes). **Result: %s.**\n\n", HoldFraction*100, MaxRateP99MS, MaxRateTarget, o.Timing.Probes, maxRateText(best, fail))
	p("| offered RPS | connections | achieved | errors | p50 | p90 | p99 | p99.9 | met | machine CPU busy |\n|--:|--:|--:|--:|--:|--:|--:|--:|:-:|--:|\n")
	for _, pr := range o.MaxRate {
		r := pr.Row
		if r == nil {
			continue
		}
		met := "no"
		if pr.OK() {
			met = "yes"
		}
		p("| %g | %d | %.1f | %d | %s | %s | %s | %s | %s | %s |\n", pr.Rate, pr.Conns, r.QPS, r.Errors, ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]),
			ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]), met, busyText(pr.Measure))
	}

	p("\n## Cost per full page\n\n")
	p("CPU seconds per 1000 full-page requests (= ms of CPU per page) of each service's process group (utime + stime from /proc/<pid>/stat over the group: gunicorn's master and workers, the JVM, node, ruby), over the measured repetitions.\n")
	p("In the interleaved 100 RPS run each stack also idles while the other is loaded; that idle CPU is included.\n\n")
	p("| run | stack | productpage | details | reviews | ratings | all services | load generator (bookload) |\n|---|---|--:|--:|--:|--:|--:|--:|\n")
	costRow := func(name, st string, m *Measure) {
		if m == nil || m.Requests[st] == 0 {
			return
		}
		p("| %s | %s | %s | %s | %s | %s | **%s** | %s |\n", name, st, ms(m.cpuPerReq(st, "productpage")), ms(m.cpuPerReq(st, "details")), ms(m.cpuPerReq(st, "reviews")),
			ms(m.cpuPerReq(st, "ratings")), ms(m.stackCPUPerReq(st)), ms(m.Self/float64(totalReqs(m))*1000))
	}
	costRow("100 RPS / 10, burst, interleaved", "legacy", o.Alone["page"][false])
	costRow("100 RPS / 10, burst, interleaved", "tuned", o.Alone["page"][false])
	costRow("100 RPS / 10, uniform", "tuned", o.Alone["page"][true])
	for _, pr := range o.MaxRate {
		costRow(fmt.Sprintf("max-rate probe %g RPS / %d", pr.Rate, pr.Conns), "tuned", pr.Measure)
	}

	writeSoak(p, o)

	p("\n## Memory\n\nPeak resident set (VmHWM, summed over each service's process group) over the whole bench, and the resident set at its end.\n\n")
	p("| stack | service | processes | peak RSS MB | RSS at end MB |\n|---|---|--:|--:|--:|\n")
	for _, st := range []string{"tuned", "legacy"} {
		var hwm, rss int64
		for _, svc := range local.Services {
			u := o.Usage[st][svc]
			hwm += u.HWMkB
			rss += u.RSSkB
			p("| %s | %s | %d | %.0f | %.0f |\n", st, svc, u.Procs, float64(u.HWMkB)/1024, float64(u.RSSkB)/1024)
		}
		p("| %s | **all** | | **%.0f** | %.0f |\n", st, float64(hwm)/1024, float64(rss)/1024)
	}
	if len(o.Notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range o.Notes {
			p("- %s\n", n)
		}
	}
	p("\n%s", analysis)
}

// busyReasons says what in this machine competed with the bench: a load
// average above the CPU count before it started, or processes other than
// the services and bookload using more than otherCPUShare of a CPU on
// average while measuring. (The load average at the end is no evidence:
// it counts the bench's own last probes.)
func (o *Outcome) busyReasons(cpus int) string {
	var parts []string
	if f := strings.Fields(o.LoadStart); len(f) > 0 {
		var v float64
		if _, err := fmt.Sscan(f[0], &v); err == nil && v > float64(cpus) {
			parts = append(parts, fmt.Sprintf("load average %.1f at the start on %d CPUs", v, cpus))
		}
	}
	var other, wall float64
	for _, m := range o.measures() {
		other += m.other()
		wall += m.Wall
	}
	if wall > 0 && other/wall > otherCPUShare {
		parts = append(parts, fmt.Sprintf("other processes used %.2f CPUs on average while measuring", other/wall))
	}
	return strings.Join(parts, ", ")
}

// otherCPUShare is how much CPU other processes may use on average before
// the report calls the machine busy.
const otherCPUShare = 0.25

// other is the CPU seconds the machine was busy beyond the services, the
// load generator and the separate echo process during m.
func (m *Measure) other() float64 {
	return math.Max(0, m.Busy-m.services()-m.Self-m.Server)
}

// services is the CPU seconds of every service of both stacks during m.
func (m *Measure) services() float64 {
	var svc float64
	for _, stack := range m.CPU {
		for _, v := range stack {
			svc += v
		}
	}
	return svc
}

// measures lists every measurement of the outcome once.
func (o *Outcome) measures() []*Measure {
	seen := map[*Measure]bool{}
	var out []*Measure
	add := func(m *Measure) {
		if m != nil && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	for _, u := range []bool{false, true} {
		add(o.Floor[u])
		add(o.FloorProcess[u])
		for _, a := range Alone {
			add(o.Alone[a.Key][u])
		}
	}
	for _, a := range Alone {
		add(o.AloneBusy[a.Key])
	}
	for _, pr := range append(slices.Clone(o.Ladder), o.MaxRate...) {
		add(pr.Measure)
	}
	return out
}

func totalReqs(m *Measure) int64 {
	var n int64
	for _, v := range m.Requests {
		n += v
	}
	return max(n, 1)
}

func arrival(uniform bool) string {
	if uniform {
		return "uniform"
	}
	return "burst"
}

func busyText(m *Measure) string {
	if m == nil || m.Wall == 0 {
		return "?"
	}
	svc, other := m.services(), m.other()
	return fmt.Sprintf("%.2f of %d CPUs (services %.2f, bookload %.2f, other processes %.2f)", m.Busy/m.Wall, results.CurrentMachine().CPUs, svc/m.Wall, m.Self/m.Wall, other/m.Wall)
}

func probeRow(p func(string, ...any), pr Probe) {
	r := pr.Row
	if r == nil {
		return
	}
	p("| %g | %d | %s | %.1f | %d | %s | %s | %s | %s | %s |\n", pr.Rate, pr.Conns, pr.Target, r.QPS, r.Errors, ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]),
		ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]), busyText(pr.Measure))
}

func maxRateText(best, fail float64) string {
	switch {
	case best > 0 && fail > 0:
		return fmt.Sprintf("%g RPS sustained; %g RPS was not", best, fail)
	case best > 0:
		return fmt.Sprintf("%g RPS sustained (no probe failed: the real maximum is higher)", best)
	case fail > 0:
		return fmt.Sprintf("no probe sustained; the lowest failing was %g RPS", fail)
	}
	return "not measured"
}

// verdicts evaluates every target of the issue against the measurements.
func (o *Outcome) verdicts() []verdict {
	var out []verdict
	for _, uniform := range []bool{true, false} {
		floor := lat(o.Floor[uniform].Row("100rps-10c", "echo"), "p50")
		for _, key := range []string{"details", "ratings", "reviews"} {
			m := o.Alone[key][uniform]
			r := m.Row("100rps-10c", "tuned")
			v := verdict{target: fmt.Sprintf("%s alone 100/10, %s: p50 ≤ %.0f× floor (%s ms), p99.9 < %.0f ms", key, arrival(uniform), ServiceP50Floors, ms(floor), ServiceP999MS)}
			if r != nil && !math.IsNaN(floor) {
				p50, p999 := r.LatencyMS["p50"], r.LatencyMS["p99.9"]
				v.known = true
				v.met = p50 <= ServiceP50Floors*floor && p999 < ServiceP999MS
				v.measured = fmt.Sprintf("p50 %s ms (%.1f×), p99.9 %s ms; CPU %s ms/req", ms(p50), p50/floor, ms(p999), ms(m.stackCPUPerReq("tuned")))
				v.limit = o.serviceLimit(key, uniform, p50, floor, p999, m, lat(o.FloorProcess[uniform].Row("100rps-10c", "echo"), "p50"))
			}
			out = append(out, v)
		}
	}
	for _, uniform := range []bool{true, false} {
		m := o.Alone["page"][uniform]
		r := m.Row("100rps-10c", "tuned")
		v := verdict{target: fmt.Sprintf("full page 100/10, %s: p50 < %.0f ms, p99 < %.0f ms", arrival(uniform), PageP50MS, PageP99MS)}
		if r != nil {
			p50, p99 := r.LatencyMS["p50"], r.LatencyMS["p99"]
			v.known = true
			v.met = p50 < PageP50MS && p99 < PageP99MS
			v.measured = fmt.Sprintf("p50 %s ms, p99 %s ms", ms(p50), ms(p99))
			v.limit = fmt.Sprintf("three hops in series-parallel (productpage → details ∥ reviews → ratings), %s ms of service CPU per page on 2 shared CPUs; see the analysis", ms(m.stackCPUPerReq("tuned")))
			if !uniform {
				v.limit = "the burst: 10 pages arrive together on 2 gunicorn workers, which queue them; " + v.limit
			}
		}
		out = append(out, v)
	}
	best, fail := o.MaxSustained()
	v := verdict{target: fmt.Sprintf("maximum sustainable full-page rate ≥ %.0f RPS (held %v, zero errors, p99 < %.0f ms; uniform arrival)", MaxRateTarget, o.Timing.Probe, MaxRateP99MS)}
	if len(o.MaxRate) > 0 {
		v.known = true
		v.met = best >= MaxRateTarget
		v.measured = maxRateText(best, fail)
		v.limit = o.maxRateLimit(fail)
	}
	out = append(out, v)

	for _, fr := range o.FrameworkRows() {
		v := verdict{target: fmt.Sprintf("%s `%s`: own CPU per request ≤ %s", fr.Service, fr.Path, allowanceText(fr.Upstream))}
		if fr.Known() {
			v.known, v.met = true, float64(fr.CPU) <= fr.Allowed()
			v.measured = fmt.Sprintf("%s ms at %g RPS vs %s ms allowed (floor %s ms): %.2f× the floor", ms(float64(fr.CPU)), fr.Rate, ms(fr.Allowed()), ms(float64(fr.FloorCPU)), float64(fr.CPU/fr.FloorCPU))
			v.limit = "see the framework floor table and the analysis"
		}
		out = append(out, v)
	}

	v = verdict{target: fmt.Sprintf("CPU per full page ≤ %.1f ms at the maximum sustainable rate, all services together", CPUPerPageMS)}
	var at *Probe
	for i := range o.MaxRate {
		if o.MaxRate[i].OK() && (at == nil || o.MaxRate[i].Rate > at.Rate) {
			at = &o.MaxRate[i]
		}
	}
	if at == nil && len(o.MaxRate) > 0 {
		at = &o.MaxRate[0]
	}
	if at != nil && at.Measure != nil && at.Measure.Requests["tuned"] > 0 {
		c := at.Measure.stackCPUPerReq("tuned")
		v.known, v.met = true, c <= CPUPerPageMS
		v.measured = fmt.Sprintf("%s ms at %g RPS (productpage %s, reviews %s, details %s, ratings %s)", ms(c), at.Rate,
			ms(at.Measure.cpuPerReq("tuned", "productpage")), ms(at.Measure.cpuPerReq("tuned", "reviews")), ms(at.Measure.cpuPerReq("tuned", "details")), ms(at.Measure.cpuPerReq("tuned", "ratings")))
		if m := o.Alone["page"][true]; m != nil && m.Requests["tuned"] > 0 {
			v.measured += fmt.Sprintf("; %s ms at 100 RPS", ms(m.stackCPUPerReq("tuned")))
		}
		v.limit = "interpreter and framework cost per request (Flask + Jinja + gevent in productpage, Spring MVC + Jackson in reviews); see the analysis"
	}
	out = append(out, v)

	var hwm int64
	for _, u := range o.Usage["tuned"] {
		hwm += u.HWMkB
	}
	v = verdict{target: fmt.Sprintf("total RSS < %.0f MB (peak, all tuned services)", TotalRSSMB), known: hwm > 0}
	v.met = float64(hwm)/1024 < TotalRSSMB
	v.measured = fmt.Sprintf("%.0f MB (reviews' JVM %.0f MB)", float64(hwm)/1024, float64(o.Usage["tuned"]["reviews"].HWMkB)/1024)
	v.limit = "the JVM's heap and code cache dominate"
	out = append(out, v)

	m := o.Alone["details"][false]
	lr, tr := m.Row("100rps-10c", "legacy"), m.Row("100rps-10c", "tuned")
	v = verdict{target: fmt.Sprintf("legacy details p99 ≥ %.0f× tuned (the Nagle stall visible), burst", LegacyP99Factor)}
	if lr != nil && tr != nil {
		f := lr.LatencyMS["p99"] / tr.LatencyMS["p99"]
		v.known, v.met = true, f >= LegacyP99Factor
		v.measured = fmt.Sprintf("legacy p99 %s ms vs tuned %s ms: %.1f×", ms(lr.LatencyMS["p99"]), ms(tr.LatencyMS["p99"]), f)
		v.limit = "Nagle + delayed ACK: ~40 ms per stalled response on Linux loopback"
	}
	out = append(out, v)
	return append(out, o.soakVerdict())
}

// serviceLimit says what keeps a service from its target. hop is the p50 of
// the echo server in a separate process (NaN when not measured).
func (o *Outcome) serviceLimit(key string, uniform bool, p50, floor, p999 float64, m *Measure, hop float64) string {
	var parts []string
	cpu := m.stackCPUPerReq("tuned")
	if busy := lat(o.AloneBusy[key].Row(busyProfile, "tuned"), "p50"); uniform && p50 > ServiceP50Floors*floor && !math.IsNaN(busy) {
		parts = append(parts, fmt.Sprintf("the idle wake-up: at %g RPS the same service answers in %s ms (%.1f× the floor)", BusyRate, ms(busy), busy/floor))
	}
	if p50 > ServiceP50Floors*floor && !math.IsNaN(hop) {
		parts = append(parts, fmt.Sprintf("the process hop: the same echo server in a separate process answers in %s ms (%.1f× the floor) before any service code runs", ms(hop), hop/floor))
	}
	if p50 > ServiceP50Floors*floor {
		if !uniform {
			parts = append(parts, "the burst: 10 requests at once on a single-threaded server queue behind each other (p50 ≈ 5 service times)")
		} else {
			parts = append(parts, fmt.Sprintf("per-request service time: %s ms of CPU per request against the floor's %s ms latency", ms(cpu), ms(floor)))
		}
	}
	if p999 >= ServiceP999MS {
		parts = append(parts, "the tail: a stall of the process (GC, scheduler on 2 shared CPUs) lands in the slowest 1 in 1000")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func (o *Outcome) maxRateLimit(fail float64) string {
	for _, p := range o.MaxRate {
		if p.Rate != fail || p.Measure == nil || p.Row == nil {
			continue
		}
		why := []string{}
		if !p.Held() {
			why = append(why, fmt.Sprintf("achieved %.0f of %g RPS", p.Row.QPS, p.Rate))
		}
		if p.Row.Errors > 0 {
			why = append(why, fmt.Sprintf("%d errors", p.Row.Errors))
		}
		if p.Row.LatencyMS["p99"] >= MaxRateP99MS {
			why = append(why, fmt.Sprintf("p99 %s ms", ms(p.Row.LatencyMS["p99"])))
		}
		return fmt.Sprintf("at %g RPS: %s, with %s: CPU-bound, the services' CPU per page times the rate, plus the load generator and other processes, fills the 2 CPUs",
			fail, strings.Join(why, ", "), busyText(p.Measure))
	}
	return "-"
}

func allowanceText(upstream int) string {
	switch upstream {
	case 0:
		return fmt.Sprintf("%.1f× its framework floor", FrameworkFactor)
	case 1:
		return fmt.Sprintf("%.1f× its framework floor + 1 floor for its upstream call", FrameworkFactor)
	}
	return fmt.Sprintf("%.1f× its framework floor + %d floors for its upstream calls", FrameworkFactor, upstream)
}

// writeFramework is the framework floor table.
func writeFramework(p func(string, ...any), o *Outcome) {
	rows := o.FrameworkRows()
	if len(o.Framework) == 0 {
		return
	}
	p("\n## Framework floor (tuned, uniform arrival)\n\n")
	p("Each framework serving a constant body on the service's own server configuration: the service's `/health` (same server, workers, routing and metrics middleware as every route) at %g RPS over 10 connections. ", BusyRate)
	p("Next to it the service's own route, its own process group's CPU only (what it calls is not counted): the leaf routes at %g RPS, the full page at %g RPS over %d connections. ", BusyRate, PageRate, conns(PageRate))
	p("Allowed: %.1f× the floor for what the route does, plus one floor per upstream call (the client side of a call parses and writes about what serving one does).\n\n", FrameworkFactor)
	p("| service | framework floor: CPU/req ms | floor p50 ms | route | rate | route CPU/req ms | route p50 ms | upstream calls | allowed ms | × floor | met |\n|---|--:|--:|---|--:|--:|--:|--:|--:|--:|:-:|\n")
	for _, r := range rows {
		met := "?"
		if r.Known() {
			met = "no"
			if float64(r.CPU) <= r.Allowed() {
				met = "**yes**"
			}
		}
		p("| %s | %s | %s | `%s` | %g | %s | %s | %d | %s | %.2f× | %s |\n", r.Service, ms(float64(r.FloorCPU)), ms(float64(r.FloorP50)), r.Path, r.Rate,
			ms(float64(r.CPU)), ms(float64(r.P50)), r.Upstream, ms(r.Allowed()), float64(r.CPU/r.FloorCPU), met)
	}
}

// writeBeforeAfter sets an earlier bench's summary beside this one.
func writeBeforeAfter(p func(string, ...any), o *Outcome) {
	b := o.Before
	if b == nil {
		return
	}
	a := o.Summarize("")
	p("\n## Before and after\n\n")
	p("The same bench code on the same machine: *before* measured the apps of `%s` (started %s UTC), *after* this run. ", b.Apps, b.Started)
	p("Host speed check, median of each run's readings: before SHA-256 %s ms, memory %.0f ns; after %s ms, %.0f ns (compare only when these agree).\n\n",
		ms(medianOf(b.Speed, false)), medianOf(b.Speed, true), ms(medianOf(a.Speed, false)), medianOf(a.Speed, true))
	p("| measure | before | after | after/before |\n|---|--:|--:|--:|\n")
	row := func(name string, before, after Num) {
		p("| %s | %s | %s | %s |\n", name, ms(float64(before)), ms(float64(after)), ratio(float64(after), float64(before)))
	}
	for _, fr := range a.Framework {
		var bf FrameworkRow
		for _, x := range b.Framework {
			if x.Service == fr.Service {
				bf = x
			}
		}
		if bf.Service == "" {
			bf = FrameworkRow{FloorCPU: Num(math.NaN()), FloorP50: Num(math.NaN()), CPU: Num(math.NaN()), P50: Num(math.NaN())}
		}
		row(fmt.Sprintf("%s `%s` at %g RPS: own CPU ms/req", fr.Service, fr.Path, fr.Rate), bf.CPU, fr.CPU)
		row(fmt.Sprintf("%s `%s` at %g RPS: p50 ms", fr.Service, fr.Path, fr.Rate), bf.P50, fr.P50)
		row(fmt.Sprintf("%s framework floor (`/health` at %g RPS): CPU ms/req", fr.Service, BusyRate), bf.FloorCPU, fr.FloorCPU)
	}
	row("full page 100/10 uniform: p50 ms", b.PageP50, a.PageP50)
	row("full page 100/10 uniform: p99 ms", b.PageP99, a.PageP99)
	row("full page 100/10 uniform: CPU ms/page, all services", b.PageCPU, a.PageCPU)
	row("maximum sustainable full-page rate, RPS", b.MaxRate, a.MaxRate)
	row("CPU ms/page at that rate, all services", b.MaxRateCPU, a.MaxRateCPU)
	row("peak RSS MB, all tuned services", b.TotalRSSMB, a.TotalRSSMB)
	for _, svc := range local.Services {
		bv, ok := b.RSSMB[svc]
		if !ok {
			bv = math.NaN()
		}
		row(fmt.Sprintf("peak RSS MB, %s", svc), Num(bv), Num(a.RSSMB[svc]))
	}
}

func ratio(after, before float64) string {
	if math.IsNaN(after) || math.IsNaN(before) || before == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", after/before)
}

// medianOf is the median of the speed checks' memory (or compute) readings.
func medianOf(cs []SpeedCheck, memory bool) float64 {
	var v []float64
	for _, c := range cs {
		if memory {
			v = append(v, c.MemoryNS)
		} else {
			v = append(v, c.ComputeMS)
		}
	}
	return stats.Median(v)
}
