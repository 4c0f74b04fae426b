// Package demo is `bookload demo`: a tuned and a legacy local stack side by
// side, the same short scenarios against both, the comparison tables, and
// what they show in one sentence.
package demo

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
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
	ScenarioDir           string
	Out                   string    // results directory
	Stdout, Stderr        io.Writer // tables; progress and messages
	Progress              io.Writer // live progress line, nil for none
}

// Outcome lists the run directories the demo wrote, and its report.
type Outcome struct {
	Dirs   []string
	Report string // the HTML report's path, once written
}

// Run starts both stacks, runs every scenario against both (interleaved,
// legacy as the baseline), prints the tables, writes the HTML report
// (<Out>/demo-report.html) and prints its path, and always stops the stacks.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	var scs []*scenario.Scenario
	for _, name := range cfg.Scenarios {
		s, err := scenario.Resolve(name, cfg.ScenarioDir)
		if err != nil {
			return nil, err
		}
		scs = append(scs, s)
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

	out := &Outcome{}
	var tables []*compare.Table
	for _, s := range scs {
		var targets []loadtarget.Target
		for _, st := range stacks {
			port, err := local.Port(st.PortBase, s.Service)
			if err != nil {
				return out, err
			}
			targets = append(targets, loadtarget.Target{
				Name:  st.Profile,
				URL:   "http://127.0.0.1:" + strconv.Itoa(port),
				Knobs: st.Env(s.Service),
			})
		}
		fmt.Fprintf(cfg.Stderr, "running %s (%s) against legacy and tuned ...\n", s.Name, s.Description)
		res, err := runner.Run(ctx, runner.Config{
			Scenario: s, Targets: targets, Out: cfg.Out, Progress: cfg.Progress,
			Labels: map[string]string{"demo": "true"},
		})
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
		t, err := compare.Build([]*results.Loaded{loaded}, compare.Options{Baseline: "legacy"})
		if err != nil {
			return out, err
		}
		fmt.Fprintf(cfg.Stdout, "\n## %s: %s\n\nresults: %s\n\n", s.Name, s.Description, res.Dir)
		if err := t.Write(cfg.Stdout, "md"); err != nil {
			return out, err
		}
		tables = append(tables, t)
	}
	fmt.Fprintf(cfg.Stdout, "\n%s\n", Sentence(scs, tables))
	path, err := writeReport(cfg.Out, out.Dirs)
	if err != nil {
		return out, fmt.Errorf("report: %w", err)
	}
	out.Report = path
	fmt.Fprintf(cfg.Stdout, "\nreport (plots, tables, run metadata; opens offline): %s\n", path)
	return out, nil
}

// ReportFile is the demo's HTML report, in the results directory.
const ReportFile = "demo-report.html"

// writeReport writes the report of the demo's runs to <out>/demo-report.html.
func writeReport(out string, dirs []string) (string, error) {
	runs, err := results.OpenAll(dirs)
	if err != nil {
		return "", err
	}
	r, err := report.Build(runs, report.Options{Baseline: "legacy", Title: "bookload demo: tuned vs legacy local stacks"})
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

// Sentence says what the tables show: how much of the latency is the
// sample app's own HTTP behaviour, per scenario, with the verdict of the
// significance test.
func Sentence(scs []*scenario.Scenario, tables []*compare.Table) string {
	var parts []string
	for i, t := range tables {
		var base, tuned *compare.Row
		for j := range t.Rows {
			switch t.Rows[j].Target {
			case "legacy":
				base = &t.Rows[j]
			case "tuned":
				tuned = &t.Rows[j]
			}
		}
		if base == nil || tuned == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s p50 %s and p99 %s",
			scs[i].Service, change(base, tuned, "p50"), change(base, tuned, "p99")))
	}
	if len(parts) == 0 {
		return "No comparison could be made."
	}
	return "What this shows: fixing the sample app's own HTTP behaviour (TCP_NODELAY in details, keep-alive in productpage) moves " +
		strings.Join(parts, "; ") +
		", on loopback with no mesh at all, so measure a mesh against the tuned profile or the app's stalls will be counted as the mesh's cost."
}

func change(base, other *compare.Row, metric string) string {
	b, o := base.LatencyMS[metric], other.LatencyMS[metric]
	d, ok := other.VsBaseline[metric]
	verdict := "~ (within noise)"
	if ok && d.Significant {
		verdict = fmt.Sprintf("%+.0f%%", d.DeltaPct)
	} else if ok && !d.Detectable {
		verdict = "(too few repetitions to tell)"
	}
	return fmt.Sprintf("from %.2f ms to %.2f ms %s", b, o, verdict)
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
	return nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
