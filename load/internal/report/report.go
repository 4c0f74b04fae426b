// Package report is `bookload report`: one self-contained HTML file from
// stored runs (no script, no stylesheet, font or image from anywhere else; it
// opens offline), and optionally the same charts as PNG files.
//
// For each scenario and profile: latency by percentile (log scale of
// 1/(1−p), as HdrHistogram plots are drawn), one line per target, from the
// repetitions' HdrHistograms merged; the p50/p90/p99 medians across
// repetitions with their confidence intervals; for a ladder (several
// profiles at different rates) latency against offered load. Then the
// comparison tables of `bookload compare` (plain and corrected), its warnings
// and notes, and each run's metadata: scenario and knobs, targets, engines
// and their versions, machine, dates.
//
// The charts are drawn by gonum.org/v1/plot (inline SVG in the page, PNG with
// --png); this package only chooses what to plot.
package report

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Options tune a report.
type Options struct {
	Baseline string          // as compare's; "" = the first target of the first run
	Margins  compare.Margins // as compare's: verdicts for these metrics
	Title    string          // "" = a title from the scenarios
	Now      func() time.Time
}

// Report is everything the page shows.
type Report struct {
	Title     string
	Generated time.Time
	Table     *compare.Table
	Runs      []*results.Loaded
	Scenarios []ScenarioSection
	Engines   []EngineNote
	PlotLib   string
}

// ScenarioSection is one scenario's charts.
type ScenarioSection struct {
	Name        string
	Description string
	Profiles    []ProfileSection
	Ladder      *Chart // nil unless several profiles at different rates
}

// ProfileSection is one profile's charts.
type ProfileSection struct {
	Profile     scenario.Profile
	Percentiles *Chart
	Summary     *Chart
	// Waterfall: where the time went, hop by hop; nil when the answers
	// carried no Server-Timing. WaterfallTable holds its numbers.
	Waterfall      *Chart
	WaterfallTable *htmlWaterfall
}

// EngineNote says how an engine's numbers were measured.
type EngineNote struct {
	Engine, Version, Note string
}

// FromDirs opens the runs in dirs (run directories or directories of runs)
// and assembles their report.
func FromDirs(dirs []string, opts Options) (*Report, error) {
	runs, err := results.OpenAll(dirs)
	if err != nil {
		return nil, err
	}
	return Build(runs, opts)
}

// Build assembles the report of runs.
func Build(runs []*results.Loaded, opts Options) (*Report, error) {
	if len(runs) == 0 {
		return nil, errors.New("no runs")
	}
	t, err := compare.Build(runs, compare.Options{Baseline: opts.Baseline, Margins: opts.Margins})
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	r := &Report{Title: opts.Title, Generated: now().UTC(), Table: t, Runs: runs, PlotLib: plotVersion()}

	// Rows come grouped by scenario, then profile, baseline first.
	type key struct{ sc, prof string }
	var order []key
	rows := map[key][]compare.Row{}
	for _, row := range t.Rows {
		k := key{row.Scenario, row.Profile}
		if _, ok := rows[k]; !ok {
			order = append(order, k)
		}
		rows[k] = append(rows[k], row)
	}
	scenarios := map[string]*scenario.Scenario{}
	for _, l := range runs {
		if _, ok := scenarios[l.Run.Scenario.Name]; !ok {
			scenarios[l.Run.Scenario.Name] = l.Run.Scenario
		}
	}
	var titles []string
	for _, k := range order {
		if len(r.Scenarios) == 0 || r.Scenarios[len(r.Scenarios)-1].Name != k.sc {
			sec := ScenarioSection{Name: k.sc}
			if s := scenarios[k.sc]; s != nil {
				sec.Description = s.Description
			}
			r.Scenarios = append(r.Scenarios, sec)
			titles = append(titles, k.sc)
		}
		sec := &r.Scenarios[len(r.Scenarios)-1]
		var ss []series
		for _, row := range rows[k] {
			s := series{name: row.Target, row: row}
			if s.plain, s.corrected, err = merged(t.Reps(row)); err != nil {
				return nil, fmt.Errorf("%s %s %s: %w", row.Scenario, row.Profile, row.Target, err)
			}
			ss = append(ss, s)
		}
		prof := t.Reps(rows[k][0])[0].Profile
		stem := fileStem(k.sc) + "_" + fileStem(k.prof)
		desc := k.sc + " " + k.prof
		ps := ProfileSection{
			Profile:     prof,
			Percentiles: percentileChart(stem+"_percentiles.png", desc+": latency by percentile", ss),
			Summary:     summaryChart(stem+"_summary.png", desc+": p50, p90, p99", ss, rows[k][0].CIConfidence),
		}
		if w := waterfallOf(t, k.sc, k.prof); w != nil {
			ps.Waterfall = waterfallChart(stem+"_waterfall.png", desc+": where the time goes", *w)
			wt := waterfallTable(*w)
			ps.WaterfallTable = &wt
		}
		sec.Profiles = append(sec.Profiles, ps)
	}
	for i := range r.Scenarios {
		r.Scenarios[i].Ladder = ladder(&r.Scenarios[i], rows2(t, r.Scenarios[i].Name))
	}
	if r.Title == "" {
		r.Title = "bookload report: " + strings.Join(titles, ", ")
	}
	r.Engines = engineNotes(runs)
	return r, nil
}

// rows2 is the table's rows of one scenario.
func rows2(t *compare.Table, sc string) []compare.Row {
	var out []compare.Row
	for _, row := range t.Rows {
		if row.Scenario == sc {
			out = append(out, row)
		}
	}
	return out
}

// ladder charts latency against offered load when a scenario's profiles
// offer at least two different rates.
func ladder(sec *ScenarioSection, rows []compare.Row) *Chart {
	rates := map[float64]bool{}
	for _, p := range sec.Profiles {
		rates[p.Profile.QPS] = true
	}
	if len(rates) < 2 {
		return nil
	}
	var names []string
	pts := map[string][]ladderPoint{}
	for _, row := range rows {
		if !slices.Contains(names, row.Target) {
			names = append(names, row.Target)
		}
		pts[row.Target] = append(pts[row.Target], ladderPoint{qps: row.TargetQPS, row: row})
	}
	for _, n := range names {
		sort.SliceStable(pts[n], func(a, b int) bool { return pts[n][a].qps < pts[n][b].qps })
	}
	return ladderChart(fileStem(sec.Name)+"_ladder.png", sec.Name+": latency vs offered load", names, pts)
}

// merged adds up the repetitions' histograms.
func merged(reps []results.Rep) (plain, corr *hdrhistogram.Histogram, err error) {
	plain, corr = latency.NewHistogram(), latency.NewHistogram()
	for _, r := range reps {
		for _, d := range []struct {
			enc string
			to  *hdrhistogram.Histogram
		}{{r.Latency.Plain.HdrHistogram, plain}, {r.Latency.Corrected.HdrHistogram, corr}} {
			if d.enc == "" {
				continue
			}
			h, err := latency.Decode(d.enc)
			if err != nil {
				return nil, nil, fmt.Errorf("repetition %d: %w", r.Repetition, err)
			}
			d.to.Merge(h)
		}
	}
	return plain, corr, nil
}

var unsafeFile = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func fileStem(s string) string { return unsafeFile.ReplaceAllString(s, "-") }

// engineNotes collects, per engine, its version and how corrected latency
// was obtained (engine_metadata), for the page's footnotes.
func engineNotes(runs []*results.Loaded) []EngineNote {
	seen := map[string]*EngineNote{}
	var order []string
	for _, l := range runs {
		for _, r := range l.Reps {
			n, ok := seen[r.Engine]
			if !ok {
				n = &EngineNote{Engine: r.Engine}
				switch r.Engine {
				case "fortio":
					n.Version = "fortio " + r.Tool.Fortio + " (in-process library)"
					n.Note = "corrected latency: from when fortio's schedule meant to send each request (see load/README.md)"
				case "bookload-agent":
					if v, ok := r.EngineMetadata["agent_fortio"].(string); ok {
						n.Version = "fortio " + v + " (in-process library in a bookload agent)"
					}
				}
				seen[r.Engine] = n
				order = append(order, r.Engine)
			}
			if v, ok := r.EngineMetadata["k6_version"].(string); ok && !strings.Contains(n.Version, v) {
				n.Version = strings.TrimPrefix(n.Version+", k6 "+v, ", ")
			}
			if c, ok := r.EngineMetadata["corrected_latency"].(string); ok && n.Note == "" {
				n.Note = "corrected latency: " + c
			}
			if p, ok := r.EngineMetadata["plain_latency"].(string); ok && !strings.Contains(n.Note, p) {
				n.Note = "plain latency: " + p + ". " + n.Note
			}
		}
	}
	out := make([]EngineNote, 0, len(order))
	for _, e := range order {
		out = append(out, *seen[e])
	}
	return out
}

func plotVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "gonum.org/v1/plot" {
				return "gonum.org/v1/plot " + d.Version
			}
		}
	}
	return "gonum.org/v1/plot"
}

// Charts lists every chart in page order.
func (r *Report) Charts() []*Chart {
	var out []*Chart
	for _, s := range r.Scenarios {
		for _, p := range s.Profiles {
			out = append(out, p.Percentiles, p.Summary)
			if p.Waterfall != nil {
				out = append(out, p.Waterfall)
			}
		}
		if s.Ladder != nil {
			out = append(out, s.Ladder)
		}
	}
	return out
}

// WritePNGs writes every chart as a PNG file into dir and returns the paths.
func (r *Report) WritePNGs(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, c := range r.Charts() {
		b, err := c.PNG()
		if err != nil {
			return paths, fmt.Errorf("%s: %w", c.File, err)
		}
		p := filepath.Join(dir, c.File)
		if err := results.WriteFileAtomic(p, b); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WriteFile writes the HTML page to path (atomically).
func (r *Report) WriteFile(path string) error {
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return results.WriteFileAtomic(path, b.Bytes())
}

//go:embed report.html.tmpl
var templates embed.FS

var page = template.Must(template.New("report.html.tmpl").Funcs(funcs).ParseFS(templates, "report.html.tmpl"))

// WriteHTML renders the page.
func (r *Report) WriteHTML(w io.Writer) error {
	svgs := map[*Chart]template.HTML{}
	for _, c := range r.Charts() {
		s, err := c.SVG()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Title, err)
		}
		svgs[c] = template.HTML(s) // gonum/plot's own SVG output, text escaped by it
	}
	var md bytes.Buffer
	if err := r.Table.Write(&md, "md"); err != nil {
		return err
	}
	return page.Execute(w, map[string]any{
		"R":                r,
		"SVG":              svgs,
		"Tables":           tables(r.Table),
		"Diffs":            differences(r.Table),
		"Markdown":         md.String(),
		"WaterfallCaption": compare.WaterfallCaption,
	})
}
