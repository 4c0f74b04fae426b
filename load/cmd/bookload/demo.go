package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/demo"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
)

func init() {
	commands["demo"] = command{summary: "tuned vs legacy local stacks side by side: short scenarios repeated until decided, the answer on one screen, the tables in a report", run: demoCmd}
}

func demoCmd(args []string) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	cfg := demo.Config{Stdout: os.Stdout, Stderr: os.Stderr}
	fs.IntVar(&cfg.TunedBase, "tuned-port-base", 9080, "port base of the tuned stack")
	fs.IntVar(&cfg.LegacyBase, "legacy-port-base", 9180, "port base of the legacy stack")
	scenarios := fs.String("scenarios", "demo-details,demo-page", "comma-separated scenario names to run")
	fs.StringVar(&cfg.Warmup, "warmup", "demo-warmup", "`SCENARIO` run on each stack before measuring, not recorded (\"\" for none)")
	fs.Var(&cfg.Margins, "margin", "`METRIC=DURATION` the verdicts judge the difference against, as in compare (repeatable; default p50=1ms and p99=1ms)")
	fs.DurationVar(&cfg.Budget, "budget", demo.DefaultBudget, "the longest the measuring may take, shared by the scenarios: each repeats until its verdicts are decided or its share is spent")
	decide := fs.String("decide", "p50", "comma-separated `METRICS` whose verdicts each scenario waits for (each needs a --margin)")
	fs.StringVar(&cfg.ScenarioDir, "scenario-dir", "scenarios", "`DIR` holding the scenario files")
	fs.StringVar(&cfg.Out, "out", "results", "`DIR` under which run directories are made")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cfg.Scenarios = strings.Split(*scenarios, ",")
	cfg.Decide = strings.Split(*decide, ",")
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "bookload demo:", err)
		return 2
	}
	if runner.IsTerminal(os.Stderr) {
		cfg.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := demo.Run(ctx, cfg)
	if out != nil && len(out.Dirs) > 0 {
		margins := strings.ReplaceAll(cfg.Margins.String(), ",", " --margin ")
		fmt.Fprintf(os.Stderr, "the runs again: bookload compare %s --baseline legacy --margin %s\n", strings.Join(out.Dirs, " "), margins)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload demo:", err)
		if errors.Is(err, runner.ErrInterrupted) {
			return 130
		}
		return 1
	}
	return 0
}
