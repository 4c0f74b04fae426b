package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/report"
)

func init() {
	commands["report"] = command{summary: "write stored runs as one self-contained HTML page with plots (and PNGs)", run: reportCmd}
}

func reportCmd(args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("o", "report.html", "`FILE` to write the HTML report to")
	png := fs.String("png", "", "also write every chart as a PNG file into `DIR`")
	baseline := fs.String("baseline", "", "target to compare against (default: the first target of the first run)")
	title := fs.String("title", "", "page title (default: from the scenarios)")
	var margins compare.Margins
	fs.Var(&margins, "margin", marginUsage)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bookload report DIR... [-o report.html] [--png DIR] [--baseline NAME] [--margin p99=1ms]... [--title TEXT]")
		fmt.Fprintln(fs.Output(), "\nDIR is a run directory (holding run.json) or a directory of runs, e.g. results/. The HTML file")
		fmt.Fprintln(fs.Output(), "needs nothing else to open (no network): charts are inline SVG.")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	dirs, code, ok := parseRunDirs(fs, args)
	if !ok {
		return code
	}
	if err := writeReport(dirs, *out, *png, report.Options{Baseline: *baseline, Margins: margins, Title: *title}); err != nil {
		fmt.Fprintln(os.Stderr, "bookload report:", err)
		return 1
	}
	return 0
}

// writeReport builds the report of dirs and writes it (and the PNGs), printing
// the paths.
func writeReport(dirs []string, out, pngDir string, opts report.Options) error {
	r, err := report.FromDirs(dirs, opts)
	if err != nil {
		return err
	}
	if err := r.WriteFile(out); err != nil {
		return err
	}
	fmt.Printf("report: %s\n", out)
	if pngDir != "" {
		paths, err := r.WritePNGs(pngDir)
		if err != nil {
			return err
		}
		fmt.Printf("charts: %d PNG files in %s\n", len(paths), pngDir)
	}
	return nil
}
