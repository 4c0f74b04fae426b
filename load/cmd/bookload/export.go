package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/smp"
)

func init() {
	commands["export"] = command{summary: "write one stored run in another format (smp: Service Mesh Performance)", run: exportCmd}
}

func exportCmd(args []string) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	format := fs.String("format", "smp", "output format: smp (Service Mesh Performance results, with bookload's own fields beside them)")
	out := fs.String("o", "", "write to `FILE` instead of stdout")
	baseline := fs.String("baseline", "", "target the differences are to (default: the first target)")
	var margins compare.Margins
	fs.Var(&margins, "margin", marginUsage)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: bookload export --format smp RUN_DIR [-o FILE] [--baseline NAME] [--margin p99=1ms]...")
		fmt.Fprintln(fs.Output(), "\nRUN_DIR is one run directory (holding run.json).")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	dirs, code, ok := parseRunDirs(fs, args)
	if !ok {
		return code
	}
	if *format != "smp" {
		fmt.Fprintf(os.Stderr, "bookload export: --format %s: unknown format (want smp)\n", *format)
		return 2
	}
	if err := exportRun(dirs, *out, compare.Options{Baseline: *baseline, Margins: margins}); err != nil {
		fmt.Fprintln(os.Stderr, "bookload export:", err)
		return 1
	}
	return 0
}

func exportRun(dirs []string, out string, opts compare.Options) error {
	runs, err := results.OpenAll(dirs)
	if err != nil {
		return err
	}
	if len(runs) != 1 {
		var names []string
		for _, r := range runs {
			names = append(names, r.Dir)
		}
		return fmt.Errorf("export takes one run directory, not %d runs: %s", len(runs), strings.Join(names, ", "))
	}
	doc, err := smp.Export(runs[0], opts)
	if err != nil {
		return err
	}
	if out == "" {
		return doc.Write(os.Stdout)
	}
	var b bytes.Buffer
	if err := doc.Write(&b); err != nil {
		return err
	}
	return results.WriteFileAtomic(out, b.Bytes())
}
