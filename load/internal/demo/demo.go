// Package demo is `bookload demo`: a tuned and a legacy local stack side by
// side, both warmed up, the same short scenarios against both, the
// comparison tables, and what they show: compare's paired differences and
// verdicts against a margin, said in words, with what limited any row that
// did not hold its rate.
package demo

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/report"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Config is one demo.
type Config struct {
	TunedBase, LegacyBase int
	Scenarios             []string // names in ScenarioDir
	// Warmup names the scenario run on each stack's full page before
	// anything is measured (not recorded); "" for none.
	Warmup      string
	ScenarioDir string
	// Margins are the verdicts' margins (compare --margin); Validate sets
	// DefaultMargins when none are given.
	Margins compare.Margins
	// Each scenario repeats until the verdicts of Decide (metrics with a
	// margin; default p50) are decided or its share of Budget (split evenly
	// over the scenarios, what one leaves passing to the next) is spent, as
	// `bookload run --until-decided` does.
	Budget         time.Duration
	Decide         []string
	Out            string    // results directory
	Stdout, Stderr io.Writer // tables; progress and messages
	Progress       io.Writer // live progress line, nil for none
}

// Outcome lists the run directories the demo wrote, and its report.
type Outcome struct {
	Dirs   []string
	Report string // the HTML report's path, once written
}

// Run starts both stacks, warms each up, runs every scenario against both
// (interleaved, legacy as the baseline), prints the tables and what they
// show, writes the HTML report (<Out>/demo-report.html) and prints its
// path, and always stops the stacks.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	var scs []*scenario.Scenario
	for _, name := range cfg.Scenarios {
		s, err := scenario.Resolve(name, cfg.ScenarioDir)
		if err != nil {
			return nil, err
		}
		scs = append(scs, s)
	}
	var warm *scenario.Scenario
	if cfg.Warmup != "" {
		var err error
		if warm, err = scenario.Resolve(cfg.Warmup, cfg.ScenarioDir); err != nil {
			return nil, err
		}
	}
	stacks := []local.Config{
		{PortBase: cfg.LegacyBase, Profile: "legacy", Reviews: "v2"},
		{PortBase: cfg.TunedBase, Profile: "tuned", Reviews: "v2"},
	}
	fmt.Fprintf(cfg.Stderr, "starting a tuned stack on %d and a legacy stack on %d ...\n", cfg.TunedBase, cfg.LegacyBase)
	if err := startStacks(ctx, stacks, cfg.Stderr); err != nil {
		return nil, err
	}
	defer func() {
		for _, st := range stacks {
			if err := local.Down(st.PortBase, false, 0, cfg.Stderr); err != nil {
				fmt.Fprintf(cfg.Stderr, "stopping the stack on %d: %v\n", st.PortBase, err)
			}
		}
	}()
	meter, err := newCPUMeter([]int{cfg.LegacyBase, cfg.TunedBase})
	if err != nil {
		return nil, err
	}
	if warm != nil {
		if err := warmUp(ctx, warm, stacks, cfg.Stderr); err != nil {
			return nil, err
		}
	}

	out := &Outcome{}
	var tables []*compare.Table
	var limits [][]string
	var stops []string
	spent := time.Duration(0)
	for i, s := range scs {
		share := (cfg.Budget - spent) / time.Duration(len(scs)-i)
		began := time.Now()
		targets, err := targetsOf(stacks, s.Service)
		if err != nil {
			return out, err
		}
		fmt.Fprintf(cfg.Stderr, "running %s against legacy and tuned until its %s verdict is decided (at most %s) ...\n",
			s.Name, strings.Join(cfg.Decide, " and "), share.Round(time.Second))
		before := meter.read()
		res, err := runner.Run(ctx, runner.Config{
			Scenario: s, Targets: targets, Out: cfg.Out, Progress: cfg.Progress,
			Labels: map[string]string{"demo": "true"},
			Until:  compare.StopRule{Baseline: "legacy", Margins: cfg.Margins, Decide: cfg.Decide}.Until(), Budget: share,
			Sequential: &results.Sequential{Baseline: "legacy", MarginsMS: cfg.Margins, BudgetSeconds: share.Seconds()},
		})
		use := meter.read().since(before)
		spent += time.Since(began)
		if res != nil {
			out.Dirs = append(out.Dirs, res.Dir)
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", s.Name, err)
		}
		loaded, err := results.Open(res.Dir)
		if err != nil {
			return out, err
		}
		t, err := compare.Build([]*results.Loaded{loaded}, compare.Options{Baseline: "legacy", Margins: cfg.Margins})
		if err != nil {
			return out, err
		}
		tables = append(tables, t)
		stop := ""
		if sq := loaded.Run.Sequential; sq != nil {
			for _, p := range s.Profiles {
				stop, _, _ = strings.Cut(sq.Stopped[p.Name], "; still open")
			}
		}
		stops = append(stops, stop)
		var missed []string
		for _, r := range t.Rows {
			p, _ := s.Profile(r.Profile)
			if l := limit(r, p.Connections, use); l != "" {
				missed = append(missed, l)
			}
		}
		limits = append(limits, missed)
	}
	fmt.Fprintf(cfg.Stdout, "\n%s", Summary(scs, tables, limits, stops))
	path, err := writeReport(cfg.Out, out.Dirs, cfg.Margins)
	if err != nil {
		return out, fmt.Errorf("report: %w", err)
	}
	out.Report = path
	fmt.Fprintf(cfg.Stdout, "\nThe tables (every percentile, both latencies, the hops), plots and run metadata: %s\n", path)
	return out, nil
}

// targetsOf is each stack's address of service, legacy first.
func targetsOf(stacks []local.Config, service string) ([]loadtarget.Target, error) {
	var targets []loadtarget.Target
	for _, st := range stacks {
		port, err := local.Port(st.PortBase, service)
		if err != nil {
			return nil, err
		}
		targets = append(targets, loadtarget.Target{
			Name:  st.Profile,
			URL:   "http://127.0.0.1:" + strconv.Itoa(port),
			Knobs: st.Env(service),
		})
	}
	return targets, nil
}

// warmUp runs the warm-up scenario's first profile on each stack in turn,
// not recorded, as make bench does: the JVM compiles reviews' hot paths
// for a while after start, and Python and Node fill their caches; a cold
// stack's first seconds are not the steady state the tables describe.
func warmUp(ctx context.Context, s *scenario.Scenario, stacks []local.Config, msgs io.Writer) error {
	if len(s.Profiles) == 0 {
		return fmt.Errorf("warm-up scenario %s has no profile", s.Name)
	}
	p := s.Profiles[0]
	for _, st := range stacks {
		targets, err := targetsOf([]local.Config{st}, s.Service)
		if err != nil {
			return err
		}
		fmt.Fprintf(msgs, "warming up the %s stack: %s %s at %g RPS over %d connections for %v (not recorded) ...\n",
			st.Profile, s.Service, s.Path, p.QPS, p.Connections, p.Duration)
		if _, err := (&fortioengine.Engine{}).Run(ctx, engine.Request{Scenario: s, Profile: p, Target: targets[0]}, nil); err != nil {
			return fmt.Errorf("warming up the %s stack: %w", st.Profile, err)
		}
	}
	if ctx.Err() != nil {
		return runner.ErrInterrupted
	}
	return nil
}

// ReportFile is the demo's HTML report, in the results directory.
const ReportFile = "demo-report.html"

// writeReport writes the report of the demo's runs to <out>/demo-report.html.
func writeReport(out string, dirs []string, margins compare.Margins) (string, error) {
	r, err := report.FromDirs(dirs, report.Options{Baseline: "legacy", Margins: margins, Title: "bookload demo: tuned vs legacy local stacks"})
	if err != nil {
		return "", err
	}
	path := filepath.Join(out, ReportFile)
	return path, r.WriteFile(path)
}

// startStacks brings both stacks up at once and says where they are.
func startStacks(ctx context.Context, stacks []local.Config, msgs io.Writer) error {
	if err := local.UpAll(ctx, stacks, msgs); err != nil {
		return err
	}
	for _, st := range stacks {
		fmt.Fprintf(msgs, "ready: %s stack at http://127.0.0.1:%d/productpage\n", st.Profile, st.PortBase)
	}
	return nil
}

// Validate checks the two port bases do not overlap.
func (c *Config) Validate() error {
	if c.TunedBase == c.LegacyBase || abs(c.TunedBase-c.LegacyBase) < len(local.Services) {
		return fmt.Errorf("port bases %d and %d overlap: each stack takes %d ports", c.TunedBase, c.LegacyBase, len(local.Services))
	}
	if c.Out == "" {
		c.Out = "results"
	}
	if c.ScenarioDir == "" {
		c.ScenarioDir = "scenarios"
	}
	if len(c.Margins) == 0 {
		c.Margins = DefaultMargins()
	}
	if c.Budget == 0 {
		c.Budget = DefaultBudget
	}
	if c.Budget < 0 {
		return fmt.Errorf("budget %v: must be above zero", c.Budget)
	}
	if len(c.Decide) == 0 {
		c.Decide = []string{"p50"}
	}
	for _, m := range c.Decide {
		if _, ok := c.Margins[m]; !ok {
			return fmt.Errorf("decide on %s: it has no margin (margins: %s)", m, c.Margins.String())
		}
	}
	return nil
}

// DefaultMargins are the verdicts' margins when none are given: 1 ms at the
// median and at p99, about the mesh costs the published tables show, so a
// difference the demo calls "within" is one a mesh comparison could ignore.
func DefaultMargins() compare.Margins { return compare.Margins{"p50": 1, "p99": 1} }

// DefaultBudget is the measuring time the demo may take, split over its
// scenarios: with the stacks' start and warm-up, the demo ends within 6
// minutes.
const DefaultBudget = 3*time.Minute + 30*time.Second

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
