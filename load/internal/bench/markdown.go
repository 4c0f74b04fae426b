package bench

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	htmlreport "github.com/bookinfo-bench/bookinfo-bench/load/internal/report"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// analysis is the hand-written part of BENCHMARKS.md: where the time goes
// (profiles) and the next step. It changes when the apps do, not per run.
//
//go:embed analysis.md
var analysis string

// WriteReport writes the HTML report of the bench's runs, built in this
// process as the demo builds its own.
func WriteReport(o *Outcome, cfg Config) {
	path := cfg.Report
	if path == "" {
		path = filepath.Join(cfg.Out, "report.html")
	}
	if len(o.Dirs) == 0 {
		o.ReportNote = "skipped: no runs"
		return
	}
	opts := htmlreport.Options{Title: "bookload bench: tuned vs legacy local stacks"}
	if len(o.Stacks) > 0 { // without the stacks (--only floor) there is no legacy target
		opts.Baseline = "legacy"
	}
	r, err := htmlreport.FromDirs(o.Dirs, opts)
	if err == nil {
		err = r.WriteFile(path)
	}
	if err != nil {
		o.ReportNote = "failed: " + err.Error()
		return
	}
	o.Report = path
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
	PlanPath                   string
	Rerun                      string // this run's line in the log of --only runs; "" for a whole bench
	Verdicts, Targets          [][]string
	BaseTitle                  string
	Latency                    [][]string
	BusyAlone                  *rowsView
	Framework                  *frameworkView
	Hops                       *hopsView
	TimingCost                 *timingCostView
	BeforeAfter                *beforeAfterView
	HoldPct                    string
	Ladder, MaxRate, Memory    rowsView
	Cost                       [][]string
	MaxRateP99, MaxRateResult  string
	MaxRateStart               float64
	Soak                       soakView
	Sections                   []section // the parts whose kind renders its own section, in plan order
	Notes                      []string
	Analysis                   string
}

// rowsView is a section's table rows and the part that owns the section.
type rowsView struct {
	Part string
	Rows [][]string
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
		Tool: results.CurrentTool(), WarmupRate: o.Plan.Warmup.QPS, Timing: o.Timing,
		ReqsPerRep: int(o.Plan.Base.QPS * o.Timing.Rep.Seconds()),
		Out:        cfg.Out, Report: o.Report, ReportNote: o.ReportNote,
		HoldPct:    fmt.Sprintf("%.0f", t.T("hold_fraction").Threshold*100),
		MaxRateP99: t.T("max_rate_p99_ms").Text(), MaxRateStart: o.Plan.first("maxrate").Load.QPS,
		Notes: o.Notes, Analysis: analysis, PlanPath: PlanPath,
		Ladder: rowsView{Part: o.Plan.first("ladder").Name}, MaxRate: rowsView{Part: o.Plan.first("maxrate").Name},
		Soak: o.soakView(), Memory: o.memoryRows(),
	}
	pg.Soak.Part, pg.Memory.Part = o.Plan.first("soak").Name, o.Plan.first("memory").Name
	if cfg.Only != "" {
		pg.Rerun = fmt.Sprintf("%s UTC: `%s` measured %s (runs in `%s`)", pg.Started, cfg.Command, strings.Join(o.Ran, ", "), cfg.Out)
		if len(o.Notes) > 0 {
			pg.Rerun += "; " + strings.Join(o.Notes, "; ")
		}
	}
	if len(o.Speed) > 0 {
		pg.Speed = speedText(o.Speed)
	}
	if len(o.Stacks) == 2 {
		pg.TunedBase, pg.LegacyBase = o.Stacks[0].PortBase, o.Stacks[1].PortBase
	}
	for _, v := range Judge(o) {
		mark := "no"
		if !v.Known {
			mark = "?"
		} else if v.Met {
			mark = "**yes**"
		}
		pg.Verdicts = append(pg.Verdicts, []string{v.Part, v.Subject, v.Measured, mark, v.Analysis})
	}
	for _, name := range t.Order {
		tg := t.T(name)
		pg.Targets = append(pg.Targets, []string{"`" + name + "`", tg.Metric, tg.Text(), tg.Why})
	}
	pg.BaseTitle = fmt.Sprintf("%g RPS over %d connections", o.Plan.Base.QPS, o.Plan.Base.Connections)
	pg.Latency = o.latencyRows()
	if slices.ContainsFunc(o.Plan.OfKind("endpoint"), func(e *Part) bool { return e.Busy != nil }) {
		pg.BusyAlone = &rowsView{Rows: o.busyRows()}
	}
	pg.Framework = o.frameworkView()
	pg.Hops, pg.TimingCost = o.hopsView(), o.timingCostView()
	pg.BeforeAfter = o.beforeAfterView()
	for _, pr := range o.Ladder {
		if r := pr.Row; r != nil {
			pg.Ladder.Rows = append(pg.Ladder.Rows, []string{fmt.Sprintf("%g", pr.Rate), fmt.Sprint(pr.Conns), pr.Target, fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
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
		pg.MaxRate.Rows = append(pg.MaxRate.Rows, []string{fmt.Sprintf("%g", pr.Rate), fmt.Sprint(pr.Conns), fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
			ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]), met, busyText(pr.Measure)})
	}
	pg.Cost = o.costRows()
	for _, pt := range o.Plan.Parts {
		if k := kinds[pt.Kind]; k.section != nil {
			pg.Sections = append(pg.Sections, section{Part: pt.Name, Text: strings.TrimRight(k.section(o, pt), "\n")})
		}
	}
	return pg
}

// section is the BENCHMARKS.md section of a part whose kind renders it.
type section struct{ Part, Text string }

// baseProfile is the name of the base profile (100rps-10c).
func (o *Outcome) baseProfile() string { return o.Plan.Base.Profile(0).Name }

// pageMeasure is the full page's endpoint measure at the base profile, or nil.
func (o *Outcome) pageMeasure(uniform bool) *Measure {
	if e := o.Plan.PageEndpoint(); e != nil {
		return o.Alone[e.Name][uniform]
	}
	return nil
}

// latencyRows are the floor's and every endpoint's rows at the base profile;
// the first cell of each row is the part that measured it.
func (o *Outcome) latencyRows() [][]string {
	var rows [][]string
	bp := o.baseProfile()
	floor := o.Plan.first("floor").Name
	for _, uniform := range []bool{false, true} {
		f := o.Floor[uniform]
		if r := f.Row(bp, "echo"); r != nil {
			rows = append(rows, []string{floor, "floor: fortio echo (in-process)", arrival(uniform), "-", fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
				ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]), "1.0×",
				ms(f.Self/float64(max(1, f.Requests["echo"]))*1000) + " (bookload: client + server)"})
		}
		f = o.FloorProcess[uniform]
		if r := f.Row(bp, "echo"); r != nil {
			rows = append(rows, []string{floor, "fortio echo in a separate process (`bookload echo`): the process hop alone", arrival(uniform), "-", fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
				ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
				fmt.Sprintf("%.1f×", r.LatencyMS["p50"]/lat(o.Floor[uniform].Row(bp, "echo"), "p50")),
				ms(f.Server/float64(max(1, f.Requests["echo"]))*1000) + " (the echo process)"})
		}
	}
	for _, e := range o.Plan.OfKind("endpoint") {
		for _, uniform := range []bool{false, true} {
			floor := lat(o.Floor[uniform].Row(bp, "echo"), "p50")
			m := o.Alone[e.Name][uniform]
			for _, st := range []string{"legacy", "tuned"} {
				r := m.Row(bp, st)
				if r == nil {
					continue
				}
				rows = append(rows, []string{e.Name, e.Title + " `" + e.Path + "`", arrival(uniform), st, fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
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
	for _, a := range o.Plan.OfKind("endpoint") {
		m := o.AloneBusy[a.Name]
		if a.Busy == nil || m == nil || a == o.Plan.PageEndpoint() {
			continue // the page at its busy rate is in the framework floor table
		}
		r := m.Row(a.Busy.Profile(0).Name, "tuned")
		if r == nil {
			continue
		}
		slow := o.Alone[a.Name][true]
		rows = append(rows, []string{a.Name, a.Title + " `" + a.Path + "`", fmt.Sprintf("%g", a.Busy.QPS), fmt.Sprintf("%.1f", r.QPS), fmt.Sprint(r.Errors),
			ms(r.LatencyMS["p50"]), ms(r.LatencyMS["p90"]), ms(r.LatencyMS["p99"]), ms(r.LatencyMS["p99.9"]),
			fmt.Sprintf("%.1f×", r.LatencyMS["p50"]/floor), ms(lat(slow.Row(bp, "tuned"), "p50")),
			fmt.Sprintf("%s (%s)", ms(m.stackCPUPerReq("tuned")), ms(slow.stackCPUPerReq("tuned")))})
	}
	return rows
}

func (o *Outcome) costRows() [][]string {
	var rows [][]string
	costRow := func(part, name, st string, m *Measure) {
		if m == nil || m.Requests[st] == 0 {
			return
		}
		rows = append(rows, []string{part, name, st, ms(m.cpuPerReq(st, "productpage")), ms(m.cpuPerReq(st, "details")), ms(m.cpuPerReq(st, "reviews")),
			ms(m.cpuPerReq(st, "ratings")), "**" + ms(m.stackCPUPerReq(st)) + "**", ms(m.Self / float64(totalReqs(m)) * 1000)})
	}
	at := fmt.Sprintf("%g RPS / %d", o.Plan.Base.QPS, o.Plan.Base.Connections)
	if e := o.Plan.PageEndpoint(); e != nil {
		costRow(e.Name, at+", burst, interleaved", "legacy", o.pageMeasure(false))
		costRow(e.Name, at+", burst, interleaved", "tuned", o.pageMeasure(false))
		costRow(e.Name, at+", uniform", "tuned", o.pageMeasure(true))
	}
	for _, pr := range o.MaxRate {
		costRow(o.Plan.first("maxrate").Name, fmt.Sprintf("max-rate probe %g RPS / %d", pr.Rate, pr.Conns), "tuned", pr.Measure)
	}
	return rows
}

func (o *Outcome) memoryRows() rowsView {
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
	return rowsView{Rows: rows}
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
		for _, a := range o.Plan.OfKind("endpoint") {
			add(o.Alone[a.Name][u])
		}
	}
	for _, a := range o.Plan.OfKind("endpoint") {
		add(o.AloneBusy[a.Name])
	}
	for _, m := range o.Framework {
		add(m)
	}
	if o.Hops != nil {
		for _, m := range slices.Concat(o.Hops.InProcess, o.Hops.Floor, o.Hops.Page) {
			add(m)
		}
	}
	for _, m := range o.TimingCost {
		add(m)
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

// shortProfile is "100/10": a load's rate over its connections.
func shortProfile(l Load) string { return fmt.Sprintf("%g/%d", l.QPS, l.Connections) }

// frameworkView is the framework floor table.
type frameworkView struct {
	Part   string
	Path   string
	Rate   float64
	Conns  int
	Factor string
	Rows   [][]string
}

func (o *Outcome) frameworkView() *frameworkView {
	if len(o.Plan.OfKind("framework")) == 0 {
		return nil
	}
	fwT := o.Plan.Targets.T("framework_factor")
	fw := o.Plan.first("framework")
	v := &frameworkView{Part: fw.Name, Path: fw.Path, Rate: fw.Load.QPS, Conns: fw.Load.Connections, Factor: fwT.Value()}
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
		row(fmt.Sprintf("%s framework floor (`%s` at %g RPS): CPU ms/req", fr.Service, o.Plan.first("framework").Path, o.Plan.first("framework").Load.QPS), bf.FloorCPU, fr.FloorCPU)
	}
	at := shortProfile(o.Plan.Base.Load)
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
