package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/bench"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
)

func init() {
	commands["bench"] = command{summary: "the performance suite (make bench): tuned and legacy stacks, floor, services, ladder, max rate, cost; writes BENCHMARKS.md (--only PART for one part)", run: benchCmd}
}

func benchCmd(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	cfg := bench.Config{Stdout: os.Stdout, Stderr: os.Stderr}
	fs.StringVar(&cfg.Out, "out", "", "`DIR` for the run directories (default results/bench-<UTC time>)")
	fs.StringVar(&cfg.Markdown, "md", "BENCHMARKS.md", "`FILE` to write the tables and verdicts to")
	fs.StringVar(&cfg.Report, "report", "", "`FILE` for the HTML report (default <out>/report.html)")
	fs.IntVar(&cfg.TunedBase, "tuned-port-base", 0, "port base of the tuned stack (default: the first free one from 20080)")
	fs.IntVar(&cfg.LegacyBase, "legacy-port-base", 0, "port base of the legacy stack (default: the next free one)")
	before := fs.String("before", "", "`FILE`: the summary.json of an earlier bench (of other apps, same machine) to set beside this one")
	fs.BoolVar(&cfg.Quick, "quick", false, "seconds instead of minutes per measurement: checks the suite, the numbers mean nothing")
	fs.DurationVar(&cfg.Soak, "soak", 0, "`DURATION` of the soak (full page, RSS slope per service); default the plan's, --quick "+bench.QuickSoak.String()+"; 0 skips it")
	fs.StringVar(&cfg.PlanFile, "plan", "", "`FILE`: what to run and the targets (default the repository's bench/plan.yaml)")
	fs.StringVar(&cfg.Only, "only", "", "`PART`[,PART...] of the plan to run (floor, details, page, framework, ladder, maxrate, soak, ...), with the parts it needs; BENCHMARKS.md keeps the other parts' rows and sections")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bookload bench [--only PART] [--out DIR] [--md BENCHMARKS.md] [--report FILE] [--before SUMMARY.json] [--quick] [--soak DURATION] [--plan FILE]")
		fmt.Fprintln(fs.Output(), "\nStarts a tuned and a legacy local stack, measures (about 13 minutes, then a 30-minute soak), stops them (also on Ctrl-C),")
		fmt.Fprintln(fs.Output(), "writes BENCHMARKS.md and the HTML report. What it runs and what it judges against: bench/plan.yaml.")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	soakSet := false
	fs.Visit(func(f *flag.Flag) { soakSet = soakSet || f.Name == "soak" })
	if cfg.Soak < 0 {
		fmt.Fprintln(os.Stderr, "bookload bench: --soak must not be negative")
		return 2
	}
	switch {
	case cfg.Quick && !soakSet:
		cfg.Soak = bench.QuickSoak
	case !soakSet:
		cfg.Soak = -1 // the plan's
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("results", "bench-"+time.Now().UTC().Format("2006-01-02T15-04-05Z"))
	}
	if *before != "" {
		s, err := bench.ReadSummary(*before)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bookload bench: --before:", err)
			return 2
		}
		cfg.Before = &s
	}
	cfg.Command = strings.Join(append([]string{"bookload", "bench"}, args...), " ")
	// The plan is read before anything starts, so a bad one costs no stack start.
	plan, err := bench.LoadPlanFor(cfg)
	if err == nil {
		_, err = plan.Select(cfg.Only)
	}
	if err == nil && cfg.Only != "" {
		err = bench.CheckMerge(cfg.Markdown)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload bench:", err)
		return 2
	}
	cfg.Plan = plan
	if runner.IsTerminal(os.Stderr) {
		cfg.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	out, err := bench.Run(ctx, cfg)
	if out == nil {
		fmt.Fprintln(os.Stderr, "bookload bench:", err)
		return 1
	}
	if err != nil {
		out.Notes = append(out.Notes, "INCOMPLETE: "+err.Error())
	}
	bench.WriteReport(out, cfg)
	if serr := bench.WriteSummary(bench.SummaryPath(cfg.Out), out.Summarize(appsVersion())); serr != nil {
		fmt.Fprintln(os.Stderr, "bookload bench: summary:", serr)
	}
	if ferr := bench.WriteFile(cfg.Markdown, out, cfg); ferr != nil {
		fmt.Fprintln(os.Stderr, "bookload bench:", ferr)
		return 1
	}
	fmt.Printf("wrote %s (runs in %s", cfg.Markdown, cfg.Out)
	if out.Report != "" {
		fmt.Printf(", report %s", out.Report)
	}
	fmt.Println(")")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookload bench:", err)
		if errors.Is(err, runner.ErrInterrupted) || errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	return 0
}

// appsVersion names the checkout whose apps were measured: its commit, and
// "+changes" when its apps/ differ from it.
func appsVersion() string {
	root, err := local.FindRepo()
	if err != nil {
		return "unknown"
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	v := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--", "apps").Output(); err == nil && len(st) > 0 {
		v += "+changes"
	}
	return v
}
