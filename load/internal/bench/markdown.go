package bench

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strings"
	"text/template"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// analysis is the hand-written part of BENCHMARKS.md: where the time goes
// (profiles) and the next step. It changes when the apps do, not per run.
//
//go:embed analysis.md
var analysis string

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

//go:embed benchmarks.md.tmpl
var benchmarksTmpl string

var mdTemplate = template.Must(template.New("BENCHMARKS.md").Funcs(template.FuncMap{
	// row is one Markdown table row of already formatted cells.
	"row": func(cells []string) string { return "| " + strings.Join(cells, " | ") + " |\n" },
}).Parse(benchmarksTmpl))

// page is what the BENCHMARKS.md template shows of one Outcome.
type page struct {
	Command, Started, Finished string
	Quick                      bool
	Busy, Slower               string
	Machine                    results.Machine
	LoadStart, LoadEnd         string
	Speed                      string
	SpeedRounds                int
	HashMiB, ChaseMiB          int
	Tool                       results.Tool
	TunedBase, LegacyBase      int
	WarmupRate                 float64
	Timing                     Timing
	ReqsPerRep                 int
	Out, Report, ReportNote    string
	Verdicts, Targets          [][]string
	BaseTitle                  string
	Latency, BusyAlone         [][]string
	Framework                  *frameworkView
	BeforeAfter                *beforeAfterView
	HoldPct                    string
	Ladder, MaxRate, Cost      [][]string
	MaxRateP99, MaxRateResult  string
	MaxRateStart               float64
	Soak                       soakView
	Memory                     [][]string
	Notes                      []string
	Analysis                   string
}

// The markers around BENCHMARKS.md's cluster section, which
// scripts/mesh-bench.sh writes and a bench run keeps.
const (
	ClusterBegin = "<!-- cluster section: written by scripts/mesh-bench.sh; bookload bench keeps it -->"
	ClusterEnd   = "<!-- end of the cluster section -->"
)

// ClusterSection returns the cluster section of an earlier BENCHMARKS.md,
// markers included and ending in a newline, or "" when it has none (or an
// unterminated one).
func ClusterSection(md []byte) string {
	s := string(md)
	i := strings.Index(s, ClusterBegin+"\n")
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], "\n"+ClusterEnd)
	if j < 0 {
		return ""
	}
	return s[i:i+j+1+len(ClusterEnd)] + "\n"
}

// Write writes BENCHMARKS.md through benchmarks.md.tmpl.
func Write(w io.Writer, o *Outcome, cfg Config) error {
	return mdTemplate.Execute(w, o.page(cfg))
}

func (o *Outcome) page(cfg Config) page {
	mach := results.CurrentMachine()
	t := o.Plan.Targets
	pg := page{
		Command: cfg.Command, Started: o.Started.UTC().Format("2006-01-02 15:04"), Finished: o.Finished.UTC().Format("15:04"),
		Quick: cfg.Quick, Busy: o.busyReasons(mach.CPUs), Slower: slowerText(o.Speed),
		Machine: mach, LoadStart: o.LoadStart, LoadEnd: o.LoadEnd,
		SpeedRounds: speedRounds, HashMiB: hashBytes >> 20, ChaseMiB: chaseWords * 4 >> 20,
		Tool: results.CurrentTool(), WarmupRate: o.Plan.StackWarmup.QPS, Timing: o.Timing,
		ReqsPerRep: int(o.Plan.Alone[0].Base.QPS * o.Timing.Rep.Seconds()),
		Out:        cfg.Out, Report: o.Report, ReportNote: o.ReportNote,
		HoldPct:    fmt.Sprintf("%.0f", t.T("hold_fraction").Threshold*100),
		MaxRateP99: t.T("max_rate_p99_ms").Text(), MaxRateStart: o.Plan.MaxRate.QPS,
		Notes: o.Notes, Analysis: analysis,
	}
	if len(o.Speed) > 0 {
		pg.Speed = speedText(o.Speed)
	}
	if len(o.Stacks) == 2 {
		pg.TunedBase, pg.LegacyBase = o.Stacks[0].PortBase, o.Stacks[1].PortBase
	}
	for _, v := range o.verdicts() {
		mark := "no"
		if !v.known {
			mark = "?"
		} else if v.met {
			mark = "**yes**"
		}
		pg.Verdicts = append(pg.Verdicts, []string{v.target, v.measured, mark, v.limit})
	}
	for _, name := range targetNames {
		tg := t.T(name)
		pg.Targets = append(pg.Targets, []string{"`" + name + "`", tg.Metric, tg.Text(), tg.Why})
	}
	base := o.Plan.Alone[0].Base
	pg.BaseTitle = fmt.Sprintf("%g RPS over %d connections", base.QPS, base.Connections)
	pg.Latency = o.latencyRows()
	pg.BusyAlone = o.busyRows()
	pg.Framework = o.frameworkView()
	pg.BeforeAfter = o.beforeAfterView()
	for _, pr := range o.Ladder {
		if r := pr.Row; r != nil {
			pg.Ladder = append(pg.Ladder, []string{fmt.Sprintf("%g", pr.Rate), fmt.Sprint(pr.Conns), pr.Target, fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
				ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]), busyText(pr.Measure)})
		}
	}
	best, fail := o.MaxSustained()
	pg.MaxRateResult = maxRateText(best, fail)
	for _, pr := range o.MaxRate {
		r := pr.Row
		if r == nil {
			continue
		}
		met := "no"
		if pr.OK(t) {
			met = "yes"
		}
		pg.MaxRate = append(pg.MaxRate, []string{fmt.Sprintf("%g", pr.Rate), fmt.Sprint(pr.Conns), fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
			ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]), met, busyText(pr.Measure)})
	}
	pg.Cost = o.costRows()
	pg.Soak = o.soakView()
	pg.Memory = o.memoryRows()
	return pg
}

// baseProfile is the name of the endpoints' base profile (100rps-10c).
func (o *Outcome) baseProfile() string {
	b := o.Plan.Alone[0].Base
	return profile(b.QPS, b.Connections, 0).Name
}

func (o *Outcome) latencyRows() [][]string {
	var rows [][]string
	bp := o.baseProfile()
	for _, uniform := range []bool{false, true} {
		f := o.Floor[uniform]
		if r := f.Row(bp, "echo"); r != nil {
			rows = append(rows, []string{"floor: fortio echo (in-process)", arrival(uniform), "-", fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
				ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]), "1.0×",
				ms(f.Self/float64(max(1, f.Requests["echo"]))*1000) + " (bookload: client + server)"})
		}
		f = o.FloorProcess[uniform]
		if r := f.Row(bp, "echo"); r != nil {
			rows = append(rows, []string{"fortio echo in a separate process (`bookload echo`): the process hop alone", arrival(uniform), "-", fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
				ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
				fmt.Sprintf("%.1f×", r.LatencyMS["p50"]/lat(o.Floor[uniform].Row(bp, "echo"), "p50")),
				ms(f.Server/float64(max(1, f.Requests["echo"]))*1000) + " (the echo process)"})
		}
	}
	for _, uniform := range []bool{false, true} {
		floor := lat(o.Floor[uniform].Row(bp, "echo"), "p50")
		for _, a := range o.Plan.Alone {
			m := o.Alone[a.Key][uniform]
			for _, st := range []string{"legacy", "tuned"} {
				r := m.Row(bp, st)
				if r == nil {
					continue
				}
				rows = append(rows, []string{a.Title + " `" + a.Path + "`", arrival(uniform), st, fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
					ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
					fmt.Sprintf("%.1f×", r.LatencyMS["p50"]/floor), ms(m.stackCPUPerReq(st))})
			}
		}
	}
	return rows
}

func (o *Outcome) busyRows() [][]string {
	var rows [][]string
	bp := o.baseProfile()
	floor := lat(o.Floor[true].Row(bp, "echo"), "p50")
	for _, a := range o.Plan.Alone {
		m := o.AloneBusy[a.Key]
		if a.Busy == nil || m == nil {
			continue
		}
		r := m.Row(a.Busy.Name, "tuned")
		if r == nil {
			continue
		}
		slow := o.Alone[a.Key][true]
		rows = append(rows, []string{a.Title + " `" + a.Path + "`", fmt.Sprintf("%g", a.Busy.QPS), fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
			ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
			fmt.Sprintf("%.1f×", r.LatencyMS["p50"]/floor), ms(lat(slow.Row(bp, "tuned"), "p50")),
			fmt.Sprintf("%s (%s)", ms(m.stackCPUPerReq("tuned")), ms(slow.stackCPUPerReq("tuned")))})
	}
	return rows
}

func (o *Outcome) costRows() [][]string {
	var rows [][]string
	costRow := func(name, st string, m *Measure) {
		if m == nil || m.Requests[st] == 0 {
			return
		}
		rows = append(rows, []string{name, st, ms(m.cpuPerReq(st, "productpage")), ms(m.cpuPerReq(st, "details")), ms(m.cpuPerReq(st, "reviews")),
			ms(m.cpuPerReq(st, "ratings")), "**" + ms(m.stackCPUPerReq(st)) + "**", ms(m.Self / float64(totalReqs(m)) * 1000)})
	}
	b := o.Plan.Alone[0].Base
	at := fmt.Sprintf("%g RPS / %d", b.QPS, b.Connections)
	costRow(at+", burst, interleaved", "legacy", o.Alone["page"][false])
	costRow(at+", burst, interleaved", "tuned", o.Alone["page"][false])
	costRow(at+", uniform", "tuned", o.Alone["page"][true])
	for _, pr := range o.MaxRate {
		costRow(fmt.Sprintf("max-rate probe %g RPS / %d", pr.Rate, pr.Conns), "tuned", pr.Measure)
	}
	return rows
}

func (o *Outcome) memoryRows() [][]string {
	var rows [][]string
	for _, st := range []string{"tuned", "legacy"} {
		var hwm, rss int64
		for _, svc := range local.Services {
			u := o.Usage[st][svc]
			hwm += u.HWMkB
			rss += u.RSSkB
			rows = append(rows, []string{st, svc, fmt.Sprint(u.Procs), fmt.Sprintf("%.0f", float64(u.HWMkB)/1024), fmt.Sprintf("%.0f", float64(u.RSSkB)/1024)})
		}
		rows = append(rows, []string{st, "**all**", "", fmt.Sprintf("**%.0f**", float64(hwm)/1024), fmt.Sprintf("%.0f", float64(rss)/1024)})
	}
	return rows
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
		for _, a := range o.Plan.Alone {
			add(o.Alone[a.Key][u])
		}
	}
	for _, a := range o.Plan.Alone {
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

// verdicts evaluates every target of bench/targets.yaml against the measurements.
func (o *Outcome) verdicts() []verdict {
	var out []verdict
	t := o.Plan.Targets
	bp := o.baseProfile()
	floors, p999T := t.T("service_p50_floors"), t.T("service_p999_ms")
	for _, uniform := range []bool{true, false} {
		floor := lat(o.Floor[uniform].Row(bp, "echo"), "p50")
		for _, a := range o.Plan.Alone {
			if a.Service == "productpage" {
				continue // the page has targets of its own; the API route is shown, not judged
			}
			m := o.Alone[a.Key][uniform]
			r := m.Row(bp, "tuned")
			v := verdict{target: fmt.Sprintf("%s alone %s, %s: p50 %s× floor (%s ms), p99.9 %s ms", a.Key, shortProfile(a.Base), arrival(uniform), floors.Text(), ms(floor), p999T.Text())}
			if r != nil && !math.IsNaN(floor) {
				p50, p999 := r.LatencyMS["p50"], r.LatencyMS["p99.9"]
				v.known = true
				v.met = floors.Met(p50/floor) && p999T.Met(p999)
				v.measured = fmt.Sprintf("p50 %s ms (%.1f×), p99.9 %s ms; CPU %s ms/req", ms(p50), p50/floor, ms(p999), ms(m.stackCPUPerReq("tuned")))
				v.limit = o.serviceLimit(a, uniform, p50, floor, p999, m, lat(o.FloorProcess[uniform].Row(bp, "echo"), "p50"))
			}
			out = append(out, v)
		}
	}
	p50T, p99T := t.T("page_p50_ms"), t.T("page_p99_ms")
	for _, uniform := range []bool{true, false} {
		m := o.Alone["page"][uniform]
		r := m.Row(bp, "tuned")
		v := verdict{target: fmt.Sprintf("full page %s, %s: p50 %s ms, p99 %s ms", shortProfile(o.Plan.Alone[0].Base), arrival(uniform), p50T.Text(), p99T.Text())}
		if r != nil {
			p50, p99 := r.LatencyMS["p50"], r.LatencyMS["p99"]
			v.known = true
			v.met = p50T.Met(p50) && p99T.Met(p99)
			v.measured = fmt.Sprintf("p50 %s ms, p99 %s ms", ms(p50), ms(p99))
			v.limit = fmt.Sprintf("three hops in series-parallel (productpage → details ∥ reviews → ratings), %s ms of service CPU per page on 2 shared CPUs; see the analysis", ms(m.stackCPUPerReq("tuned")))
			if !uniform {
				v.limit = "the burst: 10 pages arrive together on 2 gunicorn workers, which queue them; " + v.limit
			}
		}
		out = append(out, v)
	}
	best, fail := o.MaxSustained()
	rateT := t.T("max_rate_rps")
	v := verdict{target: fmt.Sprintf("maximum sustainable full-page rate %s RPS (held %v, zero errors, p99 %s ms; uniform arrival)", rateT.Text(), o.Timing.Probe, t.T("max_rate_p99_ms").Text())}
	if len(o.MaxRate) > 0 {
		v.known = true
		v.met = rateT.Met(best)
		v.measured = maxRateText(best, fail)
		v.limit = o.maxRateLimit(fail)
	}
	out = append(out, v)

	fwT := t.T("framework_factor")
	for _, fr := range o.FrameworkRows() {
		v := verdict{target: fmt.Sprintf("%s `%s`: own CPU per request %s", fr.Service, fr.Path, allowanceText(fwT, fr.Upstream))}
		if fr.Known() {
			v.known, v.met = true, fwT.Met(fr.Excess())
			v.measured = fmt.Sprintf("%s ms at %g RPS vs %s ms allowed (floor %s ms): %.2f× the floor", ms(float64(fr.CPU)), fr.Rate, ms(fr.Allowed()), ms(float64(fr.FloorCPU)), float64(fr.CPU/fr.FloorCPU))
			v.limit = "see the framework floor table and the analysis"
		}
		out = append(out, v)
	}

	cpuT := t.T("cpu_per_page_ms")
	v = verdict{target: fmt.Sprintf("CPU per full page %s ms at the maximum sustainable rate, all services together", cpuT.Text())}
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
		v.known, v.met = true, cpuT.Met(c)
		v.measured = fmt.Sprintf("%s ms at %g RPS (productpage %s, reviews %s, details %s, ratings %s)", ms(c), at.Rate,
			ms(at.Measure.cpuPerReq("tuned", "productpage")), ms(at.Measure.cpuPerReq("tuned", "reviews")), ms(at.Measure.cpuPerReq("tuned", "details")), ms(at.Measure.cpuPerReq("tuned", "ratings")))
		if m := o.Alone["page"][true]; m != nil && m.Requests["tuned"] > 0 {
			v.measured += fmt.Sprintf("; %s ms at %g RPS", ms(m.stackCPUPerReq("tuned")), o.Plan.Alone[0].Base.QPS)
		}
		v.limit = "interpreter and framework cost per request (Flask + Jinja + gevent in productpage, Spring MVC + Jackson in reviews); see the analysis"
	}
	out = append(out, v)

	var hwm int64
	for _, u := range o.Usage["tuned"] {
		hwm += u.HWMkB
	}
	rssT := t.T("total_rss_mb")
	v = verdict{target: fmt.Sprintf("total RSS %s MB (peak, all tuned services)", rssT.Text()), known: hwm > 0}
	v.met = rssT.Met(float64(hwm) / 1024)
	v.measured = fmt.Sprintf("%.0f MB (reviews' JVM %.0f MB)", float64(hwm)/1024, float64(o.Usage["tuned"]["reviews"].HWMkB)/1024)
	v.limit = "the JVM's heap and code cache dominate"
	out = append(out, v)

	m := o.Alone["details"][false]
	lr, tr := m.Row(bp, "legacy"), m.Row(bp, "tuned")
	nagleT := t.T("legacy_details_p99_factor")
	v = verdict{target: fmt.Sprintf("legacy details p99 %s× tuned (the Nagle stall visible), burst", nagleT.Text())}
	if lr != nil && tr != nil {
		f := lr.LatencyMS["p99"] / tr.LatencyMS["p99"]
		v.known, v.met = true, nagleT.Met(f)
		v.measured = fmt.Sprintf("legacy p99 %s ms vs tuned %s ms: %.1f×", ms(lr.LatencyMS["p99"]), ms(tr.LatencyMS["p99"]), f)
		v.limit = "Nagle + delayed ACK: ~40 ms per stalled response on Linux loopback"
	}
	out = append(out, v)
	return append(out, o.soakVerdict())
}

// shortProfile is "100/10": a profile's rate over its connections.
func shortProfile(p scenario.Profile) string { return fmt.Sprintf("%g/%d", p.QPS, p.Connections) }

// serviceLimit says what keeps a service from its target. hop is the p50 of
// the echo server in a separate process (NaN when not measured).
func (o *Outcome) serviceLimit(a Endpoint, uniform bool, p50, floor, p999 float64, m *Measure, hop float64) string {
	var parts []string
	cpu := m.stackCPUPerReq("tuned")
	slow := !o.Plan.Targets.T("service_p50_floors").Met(p50 / floor)
	if a.Busy != nil {
		if busy := lat(o.AloneBusy[a.Key].Row(a.Busy.Name, "tuned"), "p50"); uniform && slow && !math.IsNaN(busy) {
			parts = append(parts, fmt.Sprintf("the idle wake-up: at %g RPS the same service answers in %s ms (%.1f× the floor)", a.Busy.QPS, ms(busy), busy/floor))
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

func allowanceText(t Target, upstream int) string {
	switch upstream {
	case 0:
		return fmt.Sprintf("%s× its framework floor", t.Text())
	case 1:
		return fmt.Sprintf("%s× its framework floor + 1 floor for its upstream call", t.Text())
	}
	return fmt.Sprintf("%s× its framework floor + %d floors for its upstream calls", t.Text(), upstream)
}

// frameworkView is the framework floor table.
type frameworkView struct {
	Path   string
	Rate   float64
	Conns  int
	Factor string
	Rows   [][]string
}

func (o *Outcome) frameworkView() *frameworkView {
	if len(o.Framework) == 0 {
		return nil
	}
	fwT := o.Plan.Targets.T("framework_factor")
	v := &frameworkView{Path: o.Plan.HealthPath, Rate: o.Plan.Framework.QPS, Conns: o.Plan.Framework.Connections, Factor: fwT.Value()}
	for _, r := range o.FrameworkRows() {
		met := "?"
		if r.Known() {
			met = "no"
			if fwT.Met(r.Excess()) {
				met = "**yes**"
			}
		}
		v.Rows = append(v.Rows, []string{r.Service, ms(float64(r.FloorCPU)), ms(float64(r.FloorP50)), "`" + r.Path + "`", fmt.Sprintf("%g", r.Rate),
			ms(float64(r.CPU)), ms(float64(r.P50)), fmt.Sprint(r.Upstream), ms(r.Allowed()), fmt.Sprintf("%.2f×", float64(r.CPU/r.FloorCPU)), met})
	}
	return v
}

// beforeAfterView sets an earlier bench's summary beside this one.
type beforeAfterView struct {
	Apps, Started                            string
	BeforeSHA, BeforeMem, AfterSHA, AfterMem string
	Rows                                     [][]string
}

func (o *Outcome) beforeAfterView() *beforeAfterView {
	b := o.Before
	if b == nil {
		return nil
	}
	a := o.Summarize("")
	v := &beforeAfterView{Apps: b.Apps, Started: b.Started,
		BeforeSHA: ms(medianOf(b.Speed, false)), BeforeMem: fmt.Sprintf("%.0f", medianOf(b.Speed, true)),
		AfterSHA: ms(medianOf(a.Speed, false)), AfterMem: fmt.Sprintf("%.0f", medianOf(a.Speed, true))}
	row := func(name string, before, after Num) {
		v.Rows = append(v.Rows, []string{name, ms(float64(before)), ms(float64(after)), ratio(float64(after), float64(before))})
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
		row(fmt.Sprintf("%s framework floor (`%s` at %g RPS): CPU ms/req", fr.Service, o.Plan.HealthPath, o.Plan.Framework.QPS), bf.FloorCPU, fr.FloorCPU)
	}
	at := shortProfile(o.Plan.Alone[0].Base)
	row("full page "+at+" uniform: p50 ms", b.PageP50, a.PageP50)
	row("full page "+at+" uniform: p99 ms", b.PageP99, a.PageP99)
	row("full page "+at+" uniform: CPU ms/page, all services", b.PageCPU, a.PageCPU)
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
	return v
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
