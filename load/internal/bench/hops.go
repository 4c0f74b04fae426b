package bench

// Two parts about the Server-Timing header (docs/contract.md):
//
//   - hops: each hop's residual on the full page (what the caller waited
//     minus the callee's own time: network and kernel on loopback, no mesh)
//     at the part's load, uniform, against hop_residual_floors times the
//     loopback floor: fortio's client and its echo server in two processes,
//     a round trip through the kernel's loopback that wakes two processes as
//     a hop between two services does. The echo server in-process (one Go
//     process, its goroutines hand the request over: the floor until
//     2026-11-26) is shown beside it. The three are measured in turn, one
//     repetition each, so that all see the same machine;
//   - timing-cost: what the header costs, each costed route's own CPU per
//     request at its busy rate with SERVER_TIMING on (the tuned stack) and
//     off (a third stack, started for the part), interleaved in one run, the
//     "on" side judged against the framework floor (framework.go), the
//     difference shown.

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// HopsMeasure is the floors and the full page measured in turn, and the
// page's hops, every round merged.
type HopsMeasure struct {
	Load Load
	// One per round, in turn: the echo server in-process, in a process of
	// its own (the floor judged against), the full page.
	InProcess, Floor, Page []*Measure
	Res                    *hops.Result
}

// FloorP50 is the median of the two-process floor rounds' p50, ms.
func (h *HopsMeasure) FloorP50() float64 { return medianP50(h.Load, h.Floor) }

// InProcessP50 is the median of the in-process floor rounds' p50, ms.
func (h *HopsMeasure) InProcessP50() float64 { return medianP50(h.Load, h.InProcess) }

func medianP50(load Load, rounds []*Measure) float64 {
	var v []float64
	for _, m := range rounds {
		if r := m.Row(load.Profile(0).Name, "echo"); r != nil {
			v = append(v, r.LatencyMS["p50"])
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	return stats.Median(v)
}

// measureHops runs, once per repetition of the plan, one repetition of each
// loopback floor then one of the full page on the tuned stack, all uniform
// at the part's load.
func measureHops(ctx context.Context, b *bench, pt *Part) error {
	inProcess, err := startEcho()
	if err != nil {
		return err
	}
	process, err := startEchoProcess()
	if err != nil {
		return err
	}
	defer process.stop()
	rounds := b.tm.Reps
	b.tm.Reps = 1
	defer func() { b.tm.Reps = rounds }()
	page := b.o.Plan.Page
	h := &HopsMeasure{Load: pt.Load, Res: hops.NewResult()}
	floors := []struct {
		name, text string
		target     loadtarget.Target
		into       *[]*Measure
	}{
		{"floor-in-process", "fortio's echo server in-process", inProcess, &h.InProcess},
		{"floor", "fortio's client and its echo server in two processes", process.target, &h.Floor},
	}
	for i := range rounds {
		for _, f := range floors {
			s := b.scenario(fmt.Sprintf("bench-hops-%s-%d", f.name, i), "echo", "/echo", true, pt.Load.Profile(b.tm.Rep))
			s.Description = "loopback floor for the hop residuals: " + f.text + ", " + pattern(true)
			m, err := b.measure(ctx, s, []loadtarget.Target{f.target})
			if err != nil {
				return err
			}
			*f.into = append(*f.into, m)
		}
		s := b.scenario(fmt.Sprintf("bench-hops-page-%d", i), page.Service, page.Path, true, pt.Load.Profile(b.tm.Rep))
		s.Description = "full page, each hop's residual from Server-Timing, " + pattern(true)
		p, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", page.Service)})
		if err != nil {
			return err
		}
		res, err := p.Hops("tuned")
		if err != nil {
			return err
		}
		h.Res.Merge(res)
		h.Page = append(h.Page, p)
	}
	b.o.Hops = h
	return nil
}

// Hops merges the hops every repetition of target recorded in m's run.
func (m *Measure) Hops(target string) (*hops.Result, error) {
	out := hops.NewResult()
	if m == nil || m.Dir == "" {
		return out, nil
	}
	loaded, err := results.Open(m.Dir)
	if err != nil {
		return nil, err
	}
	for _, r := range loaded.Reps {
		if r.Target != target || r.Hops == nil {
			continue
		}
		h, err := hops.FromDoc(r.Hops)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Dir, err)
		}
		out.Merge(h)
	}
	return out, nil
}

// HopRow is one hop's residual against the loopback floors.
type HopRow struct {
	Hop          string // the residual's name: client, details, reviews, reviews.ratings
	Label        string // caller → callee
	Requests     int64
	P50          Num // the residual's own percentiles, ms
	P90          Num
	P99          Num
	FloorP50     Num // two processes: the floor judged against
	InProcessP50 Num
}

// Floors is the residual's p50 in loopback floors.
func (r HopRow) Floors() float64 { return float64(r.P50 / r.FloorP50) }

// InProcessFloors is the residual's p50 in in-process floors.
func (r HopRow) InProcessFloors() float64 { return float64(r.P50 / r.InProcessP50) }

// HopLabel names the two ends of the hop whose residual is called name:
// client → productpage, productpage → details, reviews → ratings.
func HopLabel(name string) string {
	if name == hops.ClientHop {
		return "client → productpage"
	}
	parts := strings.Split(name, ".")
	caller := "productpage"
	if len(parts) > 1 {
		caller = parts[len(parts)-2]
	}
	return caller + " → " + parts[len(parts)-1]
}

// HopRows sets each hop of h against its floors, the client's own hop
// first, then the others by name.
func HopRows(h *HopsMeasure) []HopRow {
	res := h.Res
	names := make([]string, 0, len(res.Residuals))
	for name := range res.Residuals {
		if name != hops.ClientHop {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if res.Residuals[hops.ClientHop] != nil {
		names = append([]string{hops.ClientHop}, names...)
	}
	var rows []HopRow
	for _, name := range names {
		r := res.Residuals[name]
		q := func(p float64) Num { return Num(float64(r.ValueAtQuantile(p)) / 1000) }
		rows = append(rows, HopRow{Hop: name, Label: HopLabel(name), Requests: r.TotalCount(),
			P50: q(50), P90: q(90), P99: q(99), FloorP50: Num(h.FloorP50()), InProcessP50: Num(h.InProcessP50())})
	}
	return rows
}

// judgeHops judges each hop's residual p50 against hop_residual_floors.
func judgeHops(o *Outcome, pt *Part) []Verdict {
	t := o.Plan.Targets.T("hop_residual_floors")
	subject := func(label string) string {
		return fmt.Sprintf("%s: residual p50 %s× the loopback floor (full page %s, uniform, no mesh)", label, t.Text(), shortProfile(pt.Load))
	}
	if o.Hops == nil || len(o.Hops.Res.Residuals) == 0 {
		return []Verdict{{Targets: []string{"hop_residual_floors"}, Subject: subject("every hop"), Measured: "no Server-Timing in the answers"}}
	}
	var out []Verdict
	for _, r := range HopRows(o.Hops) {
		v := Verdict{Targets: []string{"hop_residual_floors"}, Subject: subject(r.Label), Analysis: "-",
			Known: !math.IsNaN(r.Floors()), Met: t.Met(r.Floors()),
			Measured: fmt.Sprintf("p50 %s ms (p90 %s, p99 %s; %d requests) vs floor %s ms: %.1f× (in-process floor %s ms: %.1f×)",
				ms(float64(r.P50)), ms(float64(r.P90)), ms(float64(r.P99)), r.Requests, ms(float64(r.FloorP50)), r.Floors(),
				ms(float64(r.InProcessP50)), r.InProcessFloors())}
		if v.Known && !v.Met {
			v.Analysis = hopLimit
		}
		out = append(out, v)
	}
	return out
}

// hopLimit says what a residual over the target is made of, beyond the
// floor's own round trip between two processes.
const hopLimit = "what no clock of either side covers beyond the floor's round trip: each runtime's work before its first hook and after its last " +
	"(docs/contract.md, \"Server-Timing\"), waking the caller's thread, greenlet or event loop, and the caller's client library reading the answer"

// TimingOffProfile names the stack with the header off, and its load target.
const TimingOffProfile = "tuned-timing-off"

// timingOffStack is the tuned stack with SERVER_TIMING=false in every
// service, on port base base.
func timingOffStack(base int) local.Config {
	set := map[string]map[string]string{}
	for _, svc := range local.Services {
		set[svc] = map[string]string{"SERVER_TIMING": "false"}
	}
	return local.Config{PortBase: base, Profile: "tuned", Reviews: "v2", Set: set}
}

// measureTimingCost starts the stack with the header off, warms it up, and
// measures every costed route at its busy rate on the tuned stack and on it,
// interleaved repetition by repetition in one run; the off stack is stopped
// after.
func measureTimingCost(ctx context.Context, b *bench, _ *Part) error {
	base, _, err := freeBases(0, b.stack("tuned").PortBase)
	if err != nil {
		return err
	}
	off := timingOffStack(base)
	b.logf("starting a tuned stack with SERVER_TIMING=false on %d ...", base)
	defer func() {
		delete(b.groups, TimingOffProfile)
		if err := local.Down(base, false, 0, io.Discard); err != nil {
			fmt.Fprintf(b.cfg.Stderr, "stopping the stack on %d: %v\n", base, err)
		}
	}()
	if err := local.UpAll(ctx, []local.Config{off}, b.cfg.Stderr); err != nil {
		return err
	}
	if b.groups[TimingOffProfile], err = groupsAt(base, TimingOffProfile); err != nil {
		return err
	}
	offTarget := func(svc string) loadtarget.Target {
		port, _ := local.Port(base, svc)
		return loadtarget.Target{Name: TimingOffProfile, URL: fmt.Sprintf("http://127.0.0.1:%d", port), Knobs: off.Env(svc)}
	}
	if err := b.warmUp(ctx, offTarget(b.o.Plan.Page.Service)); err != nil {
		return err
	}
	b.o.TimingCost = map[string]*Measure{}
	for _, r := range b.o.Plan.Routes() {
		e := b.o.Plan.Part(r.Key)
		s := b.scenario("bench-timing-cost-"+r.Key, r.Service, r.Path, true, e.Busy.Profile(b.tm.Rep))
		s.Description = fmt.Sprintf("%s %s with SERVER_TIMING on and off at %g RPS, %s", r.Service, r.Path, r.Rate, pattern(true))
		m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", r.Service), offTarget(r.Service)})
		if err != nil {
			return err
		}
		b.o.TimingCost[r.Service] = m
	}
	return nil
}

// TimingCostRow is one service's own CPU per request with the header on and
// off, at its route's busy rate, beside its framework floor.
type TimingCostRow struct {
	FrameworkRow     // its floor and target; CPU is the header on, P50 unused
	Off          Num // CPU ms per request with the header off
}

// Cost is what the header adds per request, ms of CPU.
func (r TimingCostRow) Cost() float64 { return float64(r.CPU - r.Off) }

// CostFloors is that cost in framework floors.
func (r TimingCostRow) CostFloors() float64 { return r.Cost() / float64(r.FloorCPU) }

// Known says all three numbers were measured.
func (r TimingCostRow) Known() bool { return r.FrameworkRow.Known() && !math.IsNaN(float64(r.Off)) }

// TimingCostRows sets each framework-floor row's route with the header on
// and off (cost: service -> its measure with both stacks) against that floor.
func TimingCostRows(framework []FrameworkRow, cost map[string]*Measure) []TimingCostRow {
	var rows []TimingCostRow
	for _, f := range framework {
		m := cost[f.Service]
		f.CPU, f.P50 = Num(m.cpuPerReq("tuned", f.Service)), Num(math.NaN())
		rows = append(rows, TimingCostRow{FrameworkRow: f, Off: Num(m.cpuPerReq(TimingOffProfile, f.Service))})
	}
	return rows
}

// judgeTimingCost judges each route's own CPU with the header on against
// framework_factor, showing the header's share.
func judgeTimingCost(o *Outcome, _ *Part) []Verdict {
	t := o.Plan.Targets.T("framework_factor")
	var out []Verdict
	for _, r := range TimingCostRows(o.FrameworkRows(), o.TimingCost) {
		v := Verdict{Targets: []string{"framework_factor"},
			Subject: fmt.Sprintf("%s `%s` with Server-Timing on: own CPU per request %s", r.Service, r.Path, allowanceText(t, r.Upstream))}
		if r.Known() {
			v.Known, v.Met = true, t.Met(r.Excess())
			v.Measured = fmt.Sprintf("on %s ms, off %s ms at %g RPS (interleaved): the header %+.3f ms (%+.2f floors); on %.2f× the floor (%s ms)",
				ms(float64(r.CPU)), ms(float64(r.Off)), r.Rate, r.Cost(), r.CostFloors(), float64(r.CPU/r.FloorCPU), ms(float64(r.FloorCPU)))
			off := r.FrameworkRow
			off.CPU = r.Off
			switch {
			case v.Met:
				v.Analysis = "-"
			case !t.Met(off.Excess()):
				v.Analysis = "over without the header too: the route's own work, not the header (see the framework floor)"
			default:
				v.Analysis = "the header's cost tips the route over its allowance"
			}
		}
		out = append(out, v)
	}
	return out
}

// hopsView is the hops part's table.
type hopsView struct {
	Part, Load, Target string
	Rounds             int
	Rows               [][]string
}

func (o *Outcome) hopsView() *hopsView {
	pt := o.Plan.first("hops")
	if pt.Name == "" {
		return nil
	}
	t := o.Plan.Targets.T("hop_residual_floors")
	v := &hopsView{Part: pt.Name, Load: fmt.Sprintf("%g RPS over %d connections", pt.Load.QPS, pt.Load.Connections), Target: t.Text()}
	if o.Hops == nil {
		return v
	}
	v.Rounds = len(o.Hops.Floor)
	for _, r := range HopRows(o.Hops) {
		v.Rows = append(v.Rows, []string{r.Label, fmt.Sprint(r.Requests), ms(float64(r.P50)), ms(float64(r.P90)), ms(float64(r.P99)),
			ms(float64(r.FloorP50)), fmt.Sprintf("%.1f×", r.Floors()), ms(float64(r.InProcessP50)), fmt.Sprintf("%.1f×", r.InProcessFloors()),
			met(t.Met(r.Floors()))})
	}
	return v
}

// timingCostView is the timing-cost part's table.
type timingCostView struct {
	Part, Factor string
	Rows         [][]string
}

func (o *Outcome) timingCostView() *timingCostView {
	pt := o.Plan.first("timing-cost")
	if pt.Name == "" {
		return nil
	}
	t := o.Plan.Targets.T("framework_factor")
	v := &timingCostView{Part: pt.Name, Factor: t.Text()}
	for _, r := range TimingCostRows(o.FrameworkRows(), o.TimingCost) {
		if !r.Known() {
			v.Rows = append(v.Rows, []string{r.Service, "`" + r.Path + "`", fmt.Sprintf("%g", r.Rate), "-", "-", "-", "-", "-", "?"})
			continue
		}
		v.Rows = append(v.Rows, []string{r.Service, "`" + r.Path + "`", fmt.Sprintf("%g", r.Rate), ms(float64(r.CPU)), ms(float64(r.Off)),
			fmt.Sprintf("%+.3f (%+.2f)", r.Cost(), r.CostFloors()), ms(float64(r.FloorCPU)), ms(r.Allowed()), fmt.Sprintf("%.2f× %s", float64(r.CPU/r.FloorCPU), met(t.Met(r.Excess())))})
	}
	return v
}

func met(ok bool) string {
	if ok {
		return "**yes**"
	}
	return "no"
}
