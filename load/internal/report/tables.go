package report

import (
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// htmlTable is one comparison table (one scenario, plain or corrected), the
// same content as compare's markdown.
type htmlTable struct {
	Scenario  string
	Corrected bool
	Metrics   []string
	Rows      []htmlRow
}

type htmlRow struct {
	Delta    bool // a Δ row under a target
	Profile  string
	Target   string
	Baseline bool
	N        string
	QPS      string
	QPSWarn  bool
	Errors   string
	ErrWarn  bool
	Cells    []htmlCell
}

type htmlCell struct {
	Text  string
	Title string // the interval or p-value in full
	Class string // sig-better, sig-worse, nosig
}

func tables(t *compare.Table) []htmlTable {
	var out []htmlTable
	var scenarios []string
	for _, r := range t.Rows {
		if len(scenarios) == 0 || scenarios[len(scenarios)-1] != r.Scenario {
			scenarios = append(scenarios, r.Scenario)
		}
	}
	for _, sc := range scenarios {
		for _, corrected := range []bool{false, true} {
			ht := htmlTable{Scenario: sc, Corrected: corrected, Metrics: compare.Metrics}
			prev := ""
			for _, r := range t.Rows {
				if r.Scenario != sc {
					continue
				}
				row := htmlRow{Profile: r.Profile, Target: r.Target, Baseline: r.Baseline, N: compare.NCell(r)}
				if r.Profile == prev {
					row.Profile = ""
				}
				prev = r.Profile
				row.QPS = strconv.FormatFloat(r.QPS, 'f', 1, 64)
				if r.QPS < (1-compare.QPSShortfall)*r.TargetQPS {
					row.QPS += fmt.Sprintf(" of %g", r.TargetQPS)
					row.QPSWarn = true
				}
				row.Errors = strconv.FormatInt(r.Errors, 10)
				row.ErrWarn = r.Errors > 0
				vals, cis, deltas := r.LatencyMS, r.LatencyCIMS, r.VsBaseline
				if corrected {
					vals, cis, deltas = r.CorrectedMS, r.CorrectedCIMS, r.VsBaselineCorrected
				}
				for _, m := range compare.Metrics {
					row.Cells = append(row.Cells, htmlCell{
						Text:  compare.FormatMS(vals[m]) + compare.Spread(vals[m], cis[m]),
						Title: fmt.Sprintf("%.0f%%-confidence interval of the median: %s – %s ms", 100*r.CIConfidence, compare.FormatMS(cis[m][0]), compare.FormatMS(cis[m][1])),
					})
				}
				ht.Rows = append(ht.Rows, row)
				if deltas != nil {
					d := htmlRow{Delta: true, Target: r.Target}
					for _, m := range compare.Metrics {
						d.Cells = append(d.Cells, deltaCell(deltas[m]))
					}
					ht.Rows = append(ht.Rows, d)
				}
			}
			out = append(out, ht)
		}
	}
	return out
}

func deltaCell(d compare.Delta) htmlCell {
	title := fmt.Sprintf("Mann-Whitney U p = %.4f", d.PValue)
	if !d.Detectable {
		title += " (too few repetitions to ever reach significance)"
	}
	if !d.Significant {
		return htmlCell{Text: fmt.Sprintf("~ (p=%.2f)", d.PValue), Title: title, Class: "nosig"}
	}
	c := htmlCell{Text: fmt.Sprintf("%s%% (%s ms)", compare.Signed(compare.FormatPct(d.DeltaPct)), compare.Signed(compare.FormatMS(d.DeltaMS))), Title: title, Class: "sig-better"}
	if d.DeltaMS > 0 {
		c.Class = "sig-worse"
	}
	return c
}

// htmlDiffs is one scenario's paired differences to the baseline and the
// verdict lines under them, the same content as compare's markdown.
type htmlDiffs struct {
	Scenario string
	Metrics  []string
	Rows     []htmlDiffRow
	Lines    []htmlCell // Text: the pasteable line; Class: verdict-<result>
	Family   int        // verdicts in this table (Holm's m)
}

type htmlDiffRow struct {
	Profile, Target string
	Pairs           int
	Cells           []htmlCell
}

func differences(t *compare.Table) []htmlDiffs {
	var out []htmlDiffs
	for _, r := range t.Rows {
		if r.Difference == nil {
			continue
		}
		if len(out) == 0 || out[len(out)-1].Scenario != r.Scenario {
			out = append(out, htmlDiffs{Scenario: r.Scenario, Metrics: compare.Metrics})
		}
		hd := &out[len(out)-1]
		row := htmlDiffRow{Profile: r.Profile, Target: r.Target, Pairs: r.Difference[compare.Metrics[0]].Pairs}
		for _, m := range compare.Metrics {
			d := r.Difference[m]
			c := htmlCell{Text: compare.DiffCell(d), Title: fmt.Sprintf("%.2f%% interval of the mean of %d paired differences (SD %s ms)", 100*d.Confidence, d.Pairs, compare.FormatMS(d.SDMS))}
			if v := d.Verdict; v != nil {
				c.Class = "verdict-" + v.Result
				c.Title += fmt.Sprintf("; margin %g ms, p = %.4f, tested at level %.4f among %d verdicts", v.MarginMS, v.PValue, v.Alpha, v.Family)
				hd.Lines = append(hd.Lines, htmlCell{Text: d.Line, Class: c.Class})
				hd.Family = v.Family
			}
			row.Cells = append(row.Cells, c)
		}
		hd.Rows = append(hd.Rows, row)
	}
	return out
}

// runMeta is one run's metadata as label/value pairs.
type runMeta struct {
	ID      string
	Dir     string
	Status  string
	Note    string
	Pairs   [][2]string
	Targets []targetMeta
}

type targetMeta struct {
	Name, URL, Engine, Knobs string
}

func metadata(l *results.Loaded) runMeta {
	r := l.Run
	m := runMeta{ID: r.ID, Dir: l.Dir, Status: r.Status, Note: r.Note}
	add := func(k, v string) {
		if v != "" {
			m.Pairs = append(m.Pairs, [2]string{k, v})
		}
	}
	s := r.Scenario
	add("scenario", s.Name+" — "+s.Description)
	add("service, path", s.Service+" "+s.Path)
	var profs []string
	for _, p := range s.Profiles {
		profs = append(profs, fmt.Sprintf("%s (%g req/s, %d connections, %s)", p.Name, p.QPS, p.Connections, p.Duration))
	}
	add("profiles", strings.Join(profs, "; "))
	add("knobs", fmt.Sprintf("repetitions %d, warmup %s, timeout %s, keep-alive %t", r.Repetitions, s.Warmup, s.Timeout, s.KeepAlive))
	if len(s.Headers) > 0 {
		var hs []string
		for _, h := range s.Headers {
			hs = append(hs, h.Name+": "+h.Value)
		}
		add("headers", strings.Join(hs, ", "))
	}
	add("labels", kv(r.Labels))
	add("started", r.StartedAt.Format(time.RFC3339))
	if r.FinishedAt != nil {
		add("finished", r.FinishedAt.Format(time.RFC3339))
	}
	add("repetitions done", fmt.Sprintf("%d of %d planned", len(r.Done), len(r.Plan)))
	tool := fmt.Sprintf("bookload %s, fortio %s, %s", r.Tool.Bookload, r.Tool.Fortio, r.Tool.Go)
	k6 := map[string]bool{}
	for _, rep := range l.Reps {
		if v, ok := rep.EngineMetadata["k6_version"].(string); ok {
			k6[v] = true
		}
	}
	for _, v := range slices.Sorted(maps.Keys(k6)) {
		tool += ", k6 " + v
	}
	add("tools", tool)
	mc := r.Machine
	add("machine", fmt.Sprintf("%s: %s/%s, kernel %s, %s, %d CPUs, GOMAXPROCS %d", mc.Hostname, mc.OS, mc.Arch, mc.Kernel, mc.CPUModel, mc.CPUs, mc.GOMAXPROCS))
	for _, t := range r.Targets {
		m.Targets = append(m.Targets, targetMeta{Name: t.Name, URL: t.URL, Engine: r.Engines[t.Name], Knobs: kv(t.Knobs)})
	}
	return m
}

func kv(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}

var funcs = template.FuncMap{
	"meta": metadata,
	"pct":  func(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) },
	"time": func(t time.Time) string { return t.Format("2006-01-02 15:04:05 UTC") },
	"add":  func(a, b int) int { return a + b },
	"sub1": func(v float64) float64 { return 1 - v },
}
