// Package bench is `bookload bench` (`make bench`): the performance suite.
// What it runs comes from scenarios/bench-*.yaml and what it judges against
// from bench/targets.yaml (plan.go, targets.go). It starts a tuned and a legacy local stack on free port bases,
// measures the loopback floor (fortio's echo server, in-process), each
// service alone and the full page (tuned vs legacy, interleaved, repeated;
// fortio's default burst arrival and the uniform one), the full page over the
// ladder of rates, the maximum sustainable full-page rate (a bounded search of
// 30 s probes), the CPU each service process spends per request and its peak
// RSS (from /proc), then a soak (soak.go: the full page at a fixed rate for
// 30 minutes, RSS sampled, its slope judged), and writes BENCHMARKS.md with
// every target's verdict, and the HTML report through `bookload report`.
// The stacks are always stopped.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"fortio.org/fortio/fhttp"
	flog "fortio.org/log"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/proc"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Config is one bench.
type Config struct {
	Out      string // directory for this bench's run directories
	Markdown string // where BENCHMARKS.md is written
	Report   string // the HTML report; "" for <Out>/report.html
	Bookload string // the bookload binary, for `bookload report`; "" skips the report
	// TunedBase and LegacyBase are the stacks' port bases; 0 picks free ones.
	TunedBase, LegacyBase int
	Quick                 bool          // seconds instead of minutes: for checking the suite itself, numbers are not meaningful
	Soak                  time.Duration // the soak's length (soak.go); 0 skips it
	Command               string        // the command line, recorded in BENCHMARKS.md
	Stdout, Stderr        io.Writer
	Progress              io.Writer // live progress line; nil for none
	Before                *Summary  // an earlier bench's summary.json, for the before/after table
	// Scenarios is the directory of the bench-*.yaml scenarios and Targets
	// the targets file; "" for scenarios/ and bench/targets.yaml of the repo.
	Scenarios, Targets string
	// Plan is what to run and judge; nil reads it from Scenarios and Targets.
	Plan *Plan
}

// Timing is how long each kind of measurement runs.
type Timing struct {
	Rep, Warmup, LadderStep, Probe time.Duration
	StackWarmup                    time.Duration // full page on each stack before anything is measured
	SoakSample                     time.Duration // the soak's RSS sampling interval
	Reps, Probes                   int
}

// QuickTiming checks that the suite works end to end in about two minutes;
// the full bench's timing comes from the scenario files (Plan.Timing).
var QuickTiming = Timing{Rep: time.Second, Warmup: 500 * time.Millisecond, LadderStep: time.Second, Probe: 2 * time.Second, StackWarmup: time.Second, SoakSample: 5 * time.Second, Reps: 2, Probes: 2}

// Measure is one runner.Run with the /proc readings around it.
type Measure struct {
	Name     string
	Dir      string
	Table    *compare.Table
	Wall     float64                       // seconds of the measured repetitions
	CPU      map[string]map[string]float64 // stack profile -> service -> CPU seconds
	Requests map[string]int64              // target -> requests in the measured repetitions
	Self     float64                       // CPU seconds of bookload (load generator, echo server)
	Server   float64                       // CPU seconds of the separate echo process (FloorProcess only)
	Busy     float64                       // CPU seconds the whole machine was busy
}

// Row returns the comparison row of target at profile.
func (m *Measure) Row(profile, tgt string) *compare.Row {
	if m == nil || m.Table == nil {
		return nil
	}
	for i, r := range m.Table.Rows {
		if r.Profile == profile && r.Target == tgt {
			return &m.Table.Rows[i]
		}
	}
	return nil
}

// Probe is one step of the ladder or of the max-rate search.
type Probe struct {
	Rate     float64
	Conns    int
	Duration time.Duration
	Target   string
	Row      *compare.Row
	Measure  *Measure
}

// OK is the max-rate criterion: rate held, zero errors, p99 within
// max_rate_p99_ms.
func (p Probe) OK(t Targets) bool {
	return p.Held(t) && p.Row.Errors == 0 && t.T("max_rate_p99_ms").Met(p.Row.LatencyMS["p99"])
}

// Held says the achieved rate was within hold_fraction of the offered one.
func (p Probe) Held(t Targets) bool {
	return p.Row != nil && t.T("hold_fraction").Met(p.Row.QPS/p.Rate)
}

// Outcome is everything a bench measured.
type Outcome struct {
	Plan              *Plan // what was run and judged
	Started, Finished time.Time
	Timing            Timing
	Stacks            []local.Config
	LoadStart         string
	LoadEnd           string
	Floor             map[bool]*Measure            // by uniform
	FloorProcess      map[bool]*Measure            // by uniform: the echo server in a process of its own
	Alone             map[string]map[bool]*Measure // key -> uniform -> measure (burst: tuned vs legacy; uniform: tuned)
	AloneBusy         map[string]*Measure          // key -> tuned, uniform, at the endpoint's busy profile
	Framework         map[string]*Measure          // service -> its /health, tuned, uniform, at bench-framework.yaml's rate (framework.go)
	PageBusy          *Measure                     // the full page at PageRate, tuned, uniform
	Before            *Summary                     // an earlier bench to set beside this one, if given
	Ladder            []Probe
	MaxRate           []Probe
	Usage             map[string]map[string]proc.Usage // stack profile -> service -> at the end
	Dirs              []string
	Report            string
	ReportNote        string
	Notes             []string
	Speed             []SpeedCheck // the host speed check (speed.go), in order
	Soak              *Soak        // nil when skipped
}

// Run runs the whole suite; the stacks are stopped on every way out.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	plan := cfg.Plan
	if plan == nil {
		var err error
		if plan, err = LoadPlanFor(cfg); err != nil {
			return nil, err
		}
	}
	tm := plan.Timing
	if cfg.Quick {
		tm = QuickTiming
	}
	if cfg.Soak < 0 {
		cfg.Soak = plan.Soak.Duration.Std()
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("results", "bench-"+time.Now().UTC().Format("2006-01-02T15-04-05Z"))
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	o := &Outcome{Plan: plan, Started: time.Now(), Timing: tm, LoadStart: proc.LoadAvg(),
		Floor: map[bool]*Measure{}, FloorProcess: map[bool]*Measure{}, Alone: map[string]map[bool]*Measure{},
		AloneBusy: map[string]*Measure{}, Framework: map[string]*Measure{}, Before: cfg.Before}
	b := &bench{cfg: cfg, tm: tm, o: o}

	tuned, legacy, err := freeBases(cfg.TunedBase, cfg.LegacyBase)
	if err != nil {
		return nil, err
	}
	o.Stacks = []local.Config{
		{PortBase: tuned, Profile: "tuned", Reviews: "v2"},
		{PortBase: legacy, Profile: "legacy", Reviews: "v2"},
	}
	b.speed("before the stacks start")
	b.logf("starting a tuned stack on %d and a legacy stack on %d ...", tuned, legacy)
	if err := local.UpAll(ctx, o.Stacks, cfg.Stderr); err != nil {
		return nil, err
	}
	defer func() {
		for _, st := range o.Stacks {
			if err := local.Down(st.PortBase, false, 0, io.Discard); err != nil {
				fmt.Fprintf(cfg.Stderr, "stopping the stack on %d: %v\n", st.PortBase, err)
			}
		}
		b.logf("stopped both stacks")
	}()
	if err := b.findGroups(); err != nil {
		return o, err
	}
	err = b.all(ctx)
	if err == nil {
		b.speed("at the end")
	}
	o.Usage = map[string]map[string]proc.Usage{}
	for prof, groups := range b.groups {
		o.Usage[prof] = map[string]proc.Usage{}
		for svc, pg := range groups {
			o.Usage[prof][svc] = proc.Group(pg)
		}
	}
	o.Finished = time.Now()
	o.LoadEnd = proc.LoadAvg()
	return o, err
}

type bench struct {
	cfg    Config
	tm     Timing
	o      *Outcome
	groups map[string]map[string]int // stack profile -> service -> process group
	echo   string
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.cfg.Stderr, "bench: "+format+"\n", args...)
}

func (b *bench) findGroups() error {
	stacks, err := local.Status(io.Discard)
	if err != nil {
		return err
	}
	b.groups = map[string]map[string]int{}
	for _, st := range b.o.Stacks {
		for _, s := range stacks {
			if s.PortBase != st.PortBase {
				continue
			}
			b.groups[st.Profile] = map[string]int{}
			for _, svc := range s.Services {
				b.groups[st.Profile][svc.Name] = svc.PID
			}
		}
		if len(b.groups[st.Profile]) != len(local.Services) {
			return fmt.Errorf("the %s stack on %d does not list its %d services", st.Profile, st.PortBase, len(local.Services))
		}
	}
	return nil
}

func (b *bench) stack(profile string) local.Config {
	for _, st := range b.o.Stacks {
		if st.Profile == profile {
			return st
		}
	}
	panic("no stack " + profile)
}

func (b *bench) targetOf(profile, service string) loadtarget.Target {
	st := b.stack(profile)
	port, _ := local.Port(st.PortBase, service)
	return loadtarget.Target{Name: profile, URL: "http://127.0.0.1:" + strconv.Itoa(port), Knobs: st.Env(service)}
}

func (b *bench) all(ctx context.Context) error {
	flog.SetLogLevelQuiet(flog.Critical)
	_, addr := fhttp.ServeTCP("127.0.0.1:0", "")
	if addr == nil {
		return errors.New("could not start fortio's echo server on loopback")
	}
	b.echo = "http://" + addr.String()

	// Warm both stacks up first: the JVM compiles reviews' hot paths for a
	// minute or more after start (JFR showed its two JIT compiler threads
	// using more CPU than the request threads), and Python and Node fill
	// their caches; none of it is the steady state the tables describe.
	if b.tm.StackWarmup > 0 {
		for _, st := range []string{"tuned", "legacy"} {
			w := b.o.Plan.StackWarmup
			b.logf("warming up the %s stack: full page at %g RPS for %v (not recorded)", st, w.QPS, b.tm.StackWarmup)
			s := b.scenario("bench-warmup", "productpage", "/productpage", true, profile(w.QPS, w.Connections, b.tm.StackWarmup))
			if _, err := (&fortioengine.Engine{}).Run(ctx, engine.Request{Scenario: s, Profile: s.Profiles[0], Target: b.targetOf(st, "productpage")}, nil); err != nil {
				return fmt.Errorf("warming up the %s stack: %w", st, err)
			}
		}
	}

	b.speed("after the warm-up")
	// Floor: fortio's echo server, in this process.
	for _, uniform := range []bool{false, true} {
		s := b.scenario("bench-floor", "echo", "/echo", uniform, b.base())
		s.Description = "floor: fortio's echo server (in-process, loopback) " + pattern(uniform)
		m, err := b.measure(ctx, s, []loadtarget.Target{{Name: "echo", URL: b.echo}})
		if err != nil {
			return err
		}
		b.o.Floor[uniform] = m
	}
	// The same echo server in a process of its own: what one process hop on
	// loopback costs before any service code runs (wake-ups of a second
	// process instead of goroutines of one).
	if err := b.floorProcess(ctx); err != nil {
		return err
	}
	// Each service alone and the full page: tuned vs legacy in bursts
	// (fortio's default, the published tables' pattern), then tuned alone with
	// uniform arrival (per-request latency without the burst's queue).
	for _, uniform := range []bool{false, true} {
		for _, a := range b.o.Plan.Alone {
			s := b.scenario("bench-"+a.Key, a.Service, a.Path, uniform, b.base())
			s.Description = a.Title + ", " + pattern(uniform)
			targets := []loadtarget.Target{b.targetOf("legacy", a.Service), b.targetOf("tuned", a.Service)}
			if uniform {
				targets = targets[1:]
			}
			m, err := b.measure(ctx, s, targets)
			if err != nil {
				return err
			}
			if b.o.Alone[a.Key] == nil {
				b.o.Alone[a.Key] = map[bool]*Measure{}
			}
			b.o.Alone[a.Key][uniform] = m
		}
	}
	// The leaf services again at ten times the rate: the same requests, but
	// the processes no longer sleep between them (see the analysis).
	for _, a := range b.o.Plan.Alone {
		if a.Busy == nil || a.Key == "page" {
			continue // the page's busy rate is measured with the framework floor
		}
		s := b.scenario("bench-"+a.Key+"-busy", a.Service, a.Path, true, profile(a.Busy.QPS, a.Busy.Connections, b.tm.Rep))
		s.Description = fmt.Sprintf("%s at %g RPS, %s", a.Title, a.Busy.QPS, pattern(true))
		m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", a.Service)})
		if err != nil {
			return err
		}
		b.o.AloneBusy[a.Key] = m
	}
	if err := b.frameworkFloor(ctx); err != nil {
		return err
	}
	b.speed("before the ladder")
	if err := b.ladder(ctx); err != nil {
		return err
	}
	if err := b.maxRate(ctx); err != nil {
		return err
	}
	return b.soak(ctx)
}

// speed runs the host speed check (speed.go) while both stacks are idle.
func (b *bench) speed(when string) {
	c := speedCheck(when)
	b.o.Speed = append(b.o.Speed, c)
	b.logf("speed check %s: SHA-256 %s ms, memory %.0f ns per load", when, ms(c.ComputeMS), c.MemoryNS)
}

// floorProcess measures fortio's echo server running as `bookload echo`, a
// child process of its own; its CPU time is read from /proc like a service's.
func (b *bench) floorProcess(ctx context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "echo", "--listen", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer // fortio logs its start there; shown only on failure
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting bookload echo: %w", err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil {
		return fmt.Errorf("bookload echo did not report its address (got %q, stderr %q): %w", line, stderr.String(), err)
	}
	if !ok {
		return fmt.Errorf("bookload echo did not report its address (got %q, stderr %q)", line, stderr.String())
	}
	for _, uniform := range []bool{false, true} {
		s := b.scenario("bench-floor-process", "echo", "/echo", uniform, b.base())
		s.Description = "fortio's echo server in a separate process (loopback) " + pattern(uniform)
		cpu0 := proc.Group(cmd.Process.Pid).CPU
		m, err := b.measure(ctx, s, []loadtarget.Target{{Name: "echo", URL: url}})
		if err != nil {
			return err
		}
		m.Server = proc.Group(cmd.Process.Pid).CPU - cpu0
		b.o.FloorProcess[uniform] = m
	}
	return nil
}

// ladder runs the full page at each rung, one repetition per target, until a
// target no longer holds the rate (it then leaves the ladder).
func (b *bench) ladder(ctx context.Context) error {
	active := []string{"legacy", "tuned"}
	for _, rung := range b.o.Plan.Ladder {
		if len(active) == 0 {
			break
		}
		rate := rung.QPS
		var targets []loadtarget.Target
		for _, p := range active {
			targets = append(targets, b.targetOf(p, "productpage"))
		}
		pr := profile(rate, rung.Connections, b.tm.LadderStep)
		s := b.scenario("bench-page-ladder", "productpage", "/productpage", false, pr)
		s.Description = "full page over the ladder, " + pattern(false)
		s.Repetitions = 1
		m, err := b.measure(ctx, s, targets)
		if err != nil {
			return err
		}
		var still []string
		for _, p := range active {
			probe := Probe{Rate: rate, Conns: pr.Connections, Duration: b.tm.LadderStep, Target: p, Row: m.Row(pr.Name, p), Measure: m}
			b.o.Ladder = append(b.o.Ladder, probe)
			if probe.Held(b.o.Plan.Targets) && probe.Row.Errors == 0 {
				still = append(still, p)
			}
		}
		active = still
	}
	return nil
}

// maxRate searches the highest full-page rate the tuned stack holds for a
// whole probe (bench-maxrate.yaml's duration) with zero errors and p99 within
// max_rate_p99_ms, with uniform arrival (a burst of rate/10 simultaneous
// pages every 100 ms would measure the burst's queue, not the capacity) over
// rate/10 connections as on the ladder. It starts at bench-maxrate.yaml's
// rate, then moves up (towards the first ladder rung not held, or double) or
// down by bisection on a 50 RPS grid: at most Timing.Probes probes.
func (b *bench) maxRate(ctx context.Context) error {
	lo, hi := 0.0, math.Inf(1)
	for _, p := range b.o.Ladder {
		if p.Target == "tuned" && !p.Held(b.o.Plan.Targets) && math.IsInf(hi, 1) {
			hi = p.Rate
		}
	}
	next := b.o.Plan.MaxRate.QPS
	if next >= hi {
		next = grid(hi / 2)
	}
	for i := 0; i < b.tm.Probes && next >= 50; i++ {
		b.speed(fmt.Sprintf("before the %g RPS probe", next))
		pr := profile(next, conns(next), b.tm.Probe)
		s := b.scenario("bench-page-maxrate", "productpage", "/productpage", true, pr)
		s.Description = fmt.Sprintf("maximum sustainable full-page rate: held %v with zero errors and p99 %s ms, %s", b.tm.Probe, b.o.Plan.Targets.T("max_rate_p99_ms").Text(), pattern(true))
		s.Repetitions = 1
		m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", "productpage")})
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

// MaxSustained is the highest probe that met the criterion, 0 if none.
func (o *Outcome) MaxSustained() (best float64, lowestFail float64) {
	for _, p := range o.MaxRate {
		if p.OK(o.Plan.Targets) {
			best = math.Max(best, p.Rate)
		} else if lowestFail == 0 || p.Rate < lowestFail {
			lowestFail = p.Rate
		}
	}
	return best, lowestFail
}

// base is the endpoints' base profile (bench-details.yaml's first), at this
// bench's repetition length; the floor runs at it too.
func (b *bench) base() scenario.Profile {
	pr := b.o.Plan.Alone[0].Base
	return profile(pr.QPS, pr.Connections, b.tm.Rep)
}

// LoadPlanFor reads the plan from cfg's files, or the repository's.
func LoadPlanFor(cfg Config) (*Plan, error) {
	dir, targets := cfg.Scenarios, cfg.Targets
	if dir == "" || targets == "" {
		root, err := planRoot()
		if err != nil {
			return nil, fmt.Errorf("finding scenarios/ and bench/targets.yaml: %w", err)
		}
		if dir == "" {
			dir = filepath.Join(root, "scenarios")
		}
		if targets == "" {
			targets = filepath.Join(root, "bench", "targets.yaml")
		}
	}
	return LoadPlan(dir, targets)
}

// planRoot is the checkout whose bench files apply: the first parent of the
// working directory, else of the executable, holding bench/targets.yaml.
// Not BOOKINFO_ROOT: that names the apps to measure, which may be an older
// checkout measured by this bench for a before/after table.
func planRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "bench", "targets.yaml")); err == nil {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("no bench/targets.yaml in the working directory or above it, nor above bookload: run bookload bench inside the checkout, or give --scenarios and --targets")
}

func grid(r float64) float64 { return math.Round(r/50) * 50 }

func conns(rate float64) int { return max(1, int(math.Round(rate/10))) }

func pattern(uniform bool) string {
	if uniform {
		return "uniform arrival"
	}
	return "burst arrival (fortio's default)"
}

func profile(rate float64, c int, d time.Duration) scenario.Profile {
	return scenario.Profile{Name: fmt.Sprintf("%grps-%dc", rate, c), QPS: rate, Connections: c, Duration: scenario.Duration(d)}
}

func (b *bench) scenario(name, service, path string, uniform bool, profiles ...scenario.Profile) *scenario.Scenario {
	if uniform {
		name += "-uniform"
	}
	return &scenario.Scenario{
		Name: name, Service: service, Path: path, Repetitions: b.tm.Reps,
		Timeout: scenario.Duration(scenario.DefaultTimeout), KeepAlive: true, Uniform: uniform, Profiles: profiles,
	}
}

// measure warms every target up (not recorded, and outside the CPU
// readings), then runs s through the runner, reading /proc around it.
func (b *bench) measure(ctx context.Context, s *scenario.Scenario, targets []loadtarget.Target) (*Measure, error) {
	b.logf("%s: %s (%s)", s.Name, s.Description, profileList(s))
	if b.tm.Warmup > 0 {
		for _, p := range s.Profiles {
			for _, t := range targets {
				w := p
				w.Duration = scenario.Duration(b.tm.Warmup)
				if c := int(w.QPS * b.tm.Warmup.Seconds() / 2); c < w.Connections {
					w.Connections = max(1, c)
				}
				if _, err := (&fortioengine.Engine{}).Run(ctx, engine.Request{Scenario: s, Profile: w, Target: t}, nil); err != nil {
					return nil, fmt.Errorf("%s warmup of %s: %w", s.Name, t.Name, err)
				}
			}
		}
	}
	if ctx.Err() != nil {
		return nil, runner.ErrInterrupted
	}
	before := b.cpu()
	self0 := proc.SelfCPU()
	busy0, _ := proc.MachineCPU()
	res, err := runner.Run(ctx, runner.Config{
		Scenario: s, Targets: targets, Out: b.cfg.Out, Progress: b.cfg.Progress,
		Labels: map[string]string{"bench": "true"},
	})
	after := b.cpu()
	busy1, _ := proc.MachineCPU()
	m := &Measure{Name: s.Name, CPU: map[string]map[string]float64{}, Requests: map[string]int64{}, Self: proc.SelfCPU() - self0, Busy: busy1 - busy0}
	if res != nil {
		m.Dir = res.Dir
		b.o.Dirs = append(b.o.Dirs, res.Dir)
	}
	if err != nil {
		return m, fmt.Errorf("%s: %w", s.Name, err)
	}
	for prof, svcs := range after {
		m.CPU[prof] = map[string]float64{}
		for svc, v := range svcs {
			m.CPU[prof][svc] = v - before[prof][svc]
		}
	}
	loaded, err := results.Open(res.Dir)
	if err != nil {
		return m, err
	}
	for _, r := range loaded.Reps {
		m.Requests[r.Target] += r.Requests
		m.Wall += r.DurationSeconds
	}
	base := ""
	if slices.ContainsFunc(targets, func(t loadtarget.Target) bool { return t.Name == "legacy" }) {
		base = "legacy"
	}
	m.Table, err = compare.Build([]*results.Loaded{loaded}, compare.Options{Baseline: base})
	return m, err
}

func profileList(s *scenario.Scenario) string {
	var out string
	for i, p := range s.Profiles {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%g RPS over %d connections, %d × %v", p.QPS, p.Connections, s.Repetitions, p.Duration)
	}
	return out
}

// cpu reads the CPU seconds of every service of both stacks.
func (b *bench) cpu() map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for prof, svcs := range b.groups {
		out[prof] = map[string]float64{}
		for svc, pg := range svcs {
			out[prof][svc] = proc.Group(pg).CPU
		}
	}
	return out
}

// freeBases picks port bases whose four ports are free and that no stack
// claims, below the ephemeral port range; given ones are used as they are.
func freeBases(tuned, legacy int) (int, int, error) {
	taken := map[int]bool{}
	if stacks, err := local.Status(io.Discard); err == nil {
		for _, s := range stacks {
			taken[s.PortBase] = true
		}
	}
	pick := func(avoid int) (int, error) {
		for base := 20080; base < 32000; base += 100 {
			if taken[base] || base == avoid {
				continue
			}
			free := true
			for i := range local.Services {
				l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+i))
				if err != nil {
					free = false
					break
				}
				l.Close()
			}
			if free {
				return base, nil
			}
		}
		return 0, errors.New("no free port base between 20080 and 32000")
	}
	var err error
	if tuned == 0 {
		if tuned, err = pick(legacy); err != nil {
			return 0, 0, err
		}
	}
	if legacy == 0 {
		if legacy, err = pick(tuned); err != nil {
			return 0, 0, err
		}
	}
	if d := tuned - legacy; d > -len(local.Services) && d < len(local.Services) {
		return 0, 0, fmt.Errorf("port bases %d and %d overlap: each stack takes %d ports", tuned, legacy, len(local.Services))
	}
	return tuned, legacy, nil
}
