package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

func init() {
	commands["compare"] = command{summary: "compare stored runs: medians, confidence intervals, differences and verdicts vs a baseline", run: compareCmd}
}

func compareCmd(args []string) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	baseline := fs.String("baseline", "", "target to compare against (default: the first target of the first run)")
	format := fs.String("format", "md", "output format: "+strings.Join(compare.Formats, ", "))
	var margins compare.Margins
	fs.Var(&margins, "margin", marginUsage)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bookload compare DIR... [--baseline NAME] [--margin p99=1ms]... [--format md|csv|json|bench|waterfall-csv]")
		fmt.Fprintln(fs.Output(), "\nDIR is a run directory (holding run.json) or a directory of runs, e.g. results/.")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	dirs, code, ok := parseRunDirs(fs, args)
	if !ok {
		return code
	}
	if err := printComparison(os.Stdout, dirs, compare.Options{Baseline: *baseline, Margins: margins}, *format); err != nil {
		fmt.Fprintln(os.Stderr, "bookload compare:", err)
		return 1
	}
	return 0
}

// marginUsage documents --margin for every command that takes it.
const marginUsage = "judge each target's paired difference to the baseline in a metric (avg, p50, p75, p90, p99, p99.9) " +
	"against a margin, given as `METRIC=DURATION` (e.g. p99=1ms; repeatable): within, exceeds, faster or inconclusive"

// printComparison is the table `bookload compare` prints, also printed at the
// end of `bookload run`.
func printComparison(w io.Writer, dirs []string, opts compare.Options, format string) error {
	runs, err := results.OpenAll(dirs)
	if err != nil {
		return err
	}
	t, err := compare.Build(runs, opts)
	if err != nil {
		return err
	}
	return t.Write(w, format)
}

// parseRunDirs parses the flags and the DIR arguments (at least one) of the
// commands that read stored runs. When ok is false the command exits with
// code: 0 after -h, 2 on a usage error.
func parseRunDirs(fs *flag.FlagSet, args []string) (dirs []string, code int, ok bool) {
	dirs, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, 0, false
	case err != nil:
		return nil, 2, false
	case len(dirs) == 0:
		fs.Usage()
		return nil, 2, false
	}
	return dirs, 0, true
}
