// Package bench is `bookload bench` (`make bench`): the performance suite,
// as plan -> measure -> judge -> write. What it runs and judges against is
// one file, bench/plan.yaml (plan.go); each part of it is measured by its
// kind's measure function (parts.go) and judged by its judge function
// (judge.go); markdown.go only renders the verdicts. It starts a tuned and a
// legacy local stack on free port bases, measures the loopback floor (fortio's echo server, in-process), each
// service alone and the full page (tuned vs legacy, interleaved, repeated;
// fortio's default burst arrival and the uniform one), the full page over the
// ladder of rates, the maximum sustainable full-page rate (a bounded search of
// 30 s probes), the CPU each service process spends per request and its peak
// RSS (from /proc), then a soak (soak.go: the full page at a fixed rate for
// 30 minutes, RSS sampled, its slope judged), and writes BENCHMARKS.md with
// every target's verdict, and the HTML report (built in this process).
// `bookload bench --only PART` runs one part and rewrites only its sections
// of BENCHMARKS.md. The stacks are always stopped.
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

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/registry"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/proc"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/throughput"
)

// Config is one bench.
type Config struct {
	Out      string // directory for this bench's run directories
	Markdown string // where BENCHMARKS.md is written
	Report   string // the HTML report; "" for <Out>/report.html
	// TunedBase and LegacyBase are the stacks' port bases; 0 picks free ones.
	TunedBase, LegacyBase int
	Quick                 bool          // seconds instead of minutes: for checking the suite itself, numbers are not meaningful
	Soak                  time.Duration // the soak's length (soak.go); 0 skips it
	Command               string        // the command line, recorded in BENCHMARKS.md
	Stdout, Stderr        io.Writer
	Progress              io.Writer // live progress line; nil for none
	Before                *Summary  // an earlier bench's summary.json, for the before/after table
	// PlanFile is the plan; "" for bench/plan.yaml of the repository.
	PlanFile string
	// Plan is what to run and judge; nil reads it from PlanFile.
	Plan *Plan
	// Only names the parts to run (comma-separated), each with the parts it
	// needs; "" runs them all.
	Only string
}

// Timing is how long each kind of measurement runs.
type Timing struct {
	Rep, Warmup, LadderStep, Probe time.Duration
	StackWarmup                    time.Duration // full page on each stack before anything is measured
	SoakSample                     time.Duration // the soak's RSS sampling interval
	Reps, Probes                   int
}

// QuickTiming checks that the suite works end to end in about two minutes;
// the full bench's timing comes from the plan (Plan.Timing).
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
	Plan              *Plan    // what was run and judged
	Ran               []string // the parts measured (all of the plan's, or --only's), in order
	Started, Finished time.Time
	Timing            Timing
	Stacks            []local.Config
	LoadStart         string
	LoadEnd           string
	Floor             map[bool]*Measure            // by uniform
	FloorProcess      map[bool]*Measure            // by uniform: the echo server in a process of its own
	Alone             map[string]map[bool]*Measure // endpoint -> uniform -> measure (burst: tuned vs legacy; uniform: tuned)
	AloneBusy         map[string]*Measure          // endpoint -> tuned, uniform, at the endpoint's busy load
	Framework         map[string]*Measure          // service -> its /health, tuned, uniform, at the framework part's load (framework.go)
	Hops              *HopsMeasure                 // the hops part: the page's hops and the floor, in turn (hops.go)
	TimingCost        map[string]*Measure          // service -> its route with Server-Timing on and off, interleaved (hops.go)
	Before            *Summary                     // an earlier bench to set beside this one, if given
	Ladder            []Probe
	MaxRate           []Probe
	Usage             map[string]map[string]proc.Usage // stack profile -> service -> at the end
	Dirs              []string
	Report            string
	ReportNote        string
	Notes             []string
	Speed             []SpeedCheck        // the host speed check (speed.go), in order
	Soak              *Soak               // nil when skipped
	Scenarios         map[string]*Measure // scenario part -> its run (scenariopart.go)
	Hostile           *HostileSoak        // the hostile soak (hostilesoak.go), nil when not run
	KnownShift        *KnownShift         // the known answer on the page (knownshift.go), nil when not run
}

// Run runs the plan's parts (cfg.Only's, with what they need); the stacks
// are stopped on every way out.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	plan := cfg.Plan
	if plan == nil {
		var err error
		if plan, err = LoadPlanFor(cfg); err != nil {
			return nil, err
		}
	}
	parts, err := plan.Select(cfg.Only)
	if err != nil {
		return nil, err
	}
	tm := plan.Timing
	if cfg.Quick {
		tm = QuickTiming
	}
	if cfg.Soak < 0 {
		cfg.Soak = plan.first("soak").Load.Duration
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
	defer func() {
		o.Finished = time.Now()
		o.LoadEnd = proc.LoadAvg()
	}()
	b.speed("before the stacks start")
	if slices.ContainsFunc(parts, func(n string) bool { return needsStacks(plan.Part(n)) }) {
		stop, err := b.startStacks(ctx)
		if stop != nil {
			defer stop()
		}
		if err != nil {
			return o, err
		}
	}
	for _, name := range parts {
		pt := plan.Part(name)
		o.Ran = append(o.Ran, name)
		if err := kinds[pt.Kind].measure(ctx, b, pt); err != nil {
			return o, err
		}
	}
	b.speed("at the end")
	return o, nil
}

// startStacks starts the tuned and the legacy stack and warms them up; stop
// stops them (nil when nothing started).
func (b *bench) startStacks(ctx context.Context) (stop func(), err error) {
	tuned, legacy, err := freeBases(b.cfg.TunedBase, b.cfg.LegacyBase)
	if err != nil {
		return nil, err
	}
	b.o.Stacks = []local.Config{
		{PortBase: tuned, Profile: "tuned", Reviews: "v2"},
		{PortBase: legacy, Profile: "legacy", Reviews: "v2"},
	}
	b.logf("starting a tuned stack on %d and a legacy stack on %d ...", tuned, legacy)
	if err := local.UpAll(ctx, b.o.Stacks, b.cfg.Stderr); err != nil {
		return nil, err
	}
	stop = func() {
		for _, st := range b.o.Stacks {
			if err := local.Down(st.PortBase, false, 0, io.Discard); err != nil {
				fmt.Fprintf(b.cfg.Stderr, "stopping the stack on %d: %v\n", st.PortBase, err)
			}
		}
		b.logf("stopped both stacks")
	}
	if err := b.findGroups(); err != nil {
		return stop, err
	}
	for _, st := range []string{"tuned", "legacy"} {
		if err := b.warmUp(ctx, b.targetOf(st, b.o.Plan.Page.Service)); err != nil {
			return stop, err
		}
	}
	b.speed("after the warm-up")
	return stop, nil
}

type bench struct {
	cfg    Config
	tm     Timing
	o      *Outcome
	groups map[string]map[string]int // stack profile -> service -> process group
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.cfg.Stderr, "bench: "+format+"\n", args...)
}

func (b *bench) findGroups() error {
	b.groups = map[string]map[string]int{}
	for _, st := range b.o.Stacks {
		g, err := groupsAt(st.PortBase, st.Profile)
		if err != nil {
			return err
		}
		b.groups[st.Profile] = g
	}
	return nil
}

// groupsAt is the process group of every service of the stack on base
// (called name in errors).
func groupsAt(base int, name string) (map[string]int, error) {
	stacks, err := local.Status(io.Discard)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, s := range stacks {
		if s.PortBase != base {
			continue
		}
		for _, svc := range s.Services {
			out[svc.Name] = svc.PID
		}
	}
	if len(out) != len(local.Services) {
		return nil, fmt.Errorf("the %s stack on %d does not list its %d services", name, base, len(local.Services))
	}
	return out, nil
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

// warmUp serves the full page on target (a stack's productpage) first: the
// JVM compiles reviews' hot paths for a minute or more after start (JFR
// showed its two JIT compiler threads using more CPU than the request
// threads), and Python and Node fill their caches; none of it is the steady
// state the tables describe.
func (b *bench) warmUp(ctx context.Context, target loadtarget.Target) error {
	if b.tm.StackWarmup <= 0 {
		return nil
	}
	w, page := b.o.Plan.Warmup, b.o.Plan.Page
	b.logf("warming up the %s stack: full page at %g RPS for %v (not recorded)", target.Name, w.QPS, b.tm.StackWarmup)
	s := b.scenario("bench-warmup", page.Service, page.Path, true, w.Profile(b.tm.StackWarmup))
	if _, err := (&fortioengine.Engine{}).Run(ctx, engine.Request{Scenario: s, Profile: s.Profiles[0], Target: target}, nil); err != nil {
		return fmt.Errorf("warming up the %s stack: %w", target.Name, err)
	}
	return nil
}

// speed runs the host speed check (speed.go) while both stacks are idle.
func (b *bench) speed(when string) {
	c := speedCheck(when)
	b.o.Speed = append(b.o.Speed, c)
	b.logf("speed check %s: SHA-256 %s ms, memory %.0f ns per load", when, ms(c.ComputeMS), c.MemoryNS)
}

// echoProcess is fortio's echo server running as `bookload echo`, a child
// process of its own on loopback.
type echoProcess struct {
	cmd    *exec.Cmd
	target loadtarget.Target
}

// startEchoProcess starts `bookload echo` and reads the address it reports.
func startEchoProcess() (*echoProcess, error) {
	c, err := startSelf("echo", "--listen", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &echoProcess{cmd: c.cmd, target: loadtarget.Target{Name: "echo", URL: c.url}}, nil
}

// child is a bookload subcommand running as a process of its own that
// reported "listening on URL" on its first line.
type child struct {
	cmd    *exec.Cmd
	url    string
	out    *bufio.Reader // the rest of its stdout
	stderr *bytes.Buffer // shown only on failure
}

// startSelf starts this binary with args and reads the address it reports;
// it dies with this process.
func startSelf(args ...string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: exec.Command(self, args...), stderr: &bytes.Buffer{}}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.cmd.Stderr = c.stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting bookload %s: %w", args[0], err)
	}
	c.out = bufio.NewReader(out)
	line, err := c.out.ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		_ = c.cmd.Wait()
		return nil, errors.Join(fmt.Errorf("bookload %s did not report its address (got %q, stderr %q)", args[0], line, c.stderr.String()), err)
	}
	c.url = url
	return c, nil
}

// cpu is the CPU seconds the echo process has used so far.
func (e *echoProcess) cpu() float64 { return proc.Group(e.cmd.Process.Pid).CPU }

func (e *echoProcess) stop() {
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	_ = e.cmd.Wait()
}

// floorProcess measures fortio's echo server in a process of its own; its
// CPU time is read from /proc like a service's.
func (b *bench) floorProcess(ctx context.Context) error {
	echo, err := startEchoProcess()
	if err != nil {
		return err
	}
	defer echo.stop()
	for _, uniform := range []bool{false, true} {
		s := b.scenario("bench-floor-process", "echo", "/echo", uniform, b.base())
		s.Description = "fortio's echo server in a separate process (loopback) " + pattern(uniform)
		cpu0 := echo.cpu()
		m, err := b.measure(ctx, s, []loadtarget.Target{echo.target})
		if err != nil {
			return err
		}
		m.Server = echo.cpu() - cpu0
		b.o.FloorProcess[uniform] = m
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

// base is the shared base profile at this bench's repetition length.
func (b *bench) base() scenario.Profile { return b.o.Plan.Base.Profile(b.tm.Rep) }

// LoadPlanFor reads cfg's plan file, or the repository's.
func LoadPlanFor(cfg Config) (*Plan, error) {
	if cfg.PlanFile != "" {
		return LoadPlan(cfg.PlanFile)
	}
	root, err := planRoot()
	if err != nil {
		return nil, fmt.Errorf("finding bench/plan.yaml: %w", err)
	}
	return LoadPlan(filepath.Join(root, PlanPath))
}

// PlanPath is the plan's place in the repository.
var PlanPath = filepath.Join("bench", "plan.yaml")

// planRoot is the checkout whose plan applies: the first parent of the
// working directory, else of the executable, holding bench/plan.yaml.
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
			if _, err := os.Stat(filepath.Join(d, PlanPath)); err == nil {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("no bench/plan.yaml in the working directory or above it, nor above bookload: run bookload bench inside the checkout, or give --plan")
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
		// This process's CPU per repetition: the throughput rows' CPU per Gbit/s.
		EngineFor: throughput.Wrap(registry.ByScheme, fortioengine.Name),
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
