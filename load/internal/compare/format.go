package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Formats are the output formats of Write.
var Formats = []string{"md", "csv", "json", "bench", "waterfall-csv"}

// Write renders t in format: md (tables like the published ones), csv, json
// (the Table document), bench (Go benchmark format, for benchstat) or
// waterfall-csv (the waterfalls, one line per part; a CSV holds one table).
func (t *Table) Write(w io.Writer, format string) error {
	switch format {
	case "md", "markdown":
		return t.markdown(w)
	case "csv":
		return t.csv(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	case "bench", "benchstat":
		return t.bench(w)
	case "waterfall-csv":
		return t.waterfallCSV(w)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// FormatMS formats milliseconds with three significant digits (0.123, 2.67,
// 36.6, 412), as every table of compare and report shows them.
func FormatMS(v float64) string {
	if v == 0 || math.IsNaN(v) {
		return "0"
	}
	dec := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	return strconv.FormatFloat(v, 'f', max(dec, 0), 64)
}

// FormatPct formats a percentage: one decimal below 10, none above.
func FormatPct(v float64) string {
	if math.Abs(v) < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// Signed prefixes a formatted non-negative number with "+".
func Signed(s string) string {
	if !strings.HasPrefix(s, "-") {
		return "+" + s
	}
	return s
}

// Spread is the CI's larger half-width relative to the median, as
// benchstat's ±: " ±4.2%".
func Spread(med float64, ci [2]float64) string {
	if med == 0 {
		return ""
	}
	h := math.Max(med-ci[0], ci[1]-med) / med * 100
	return " ±" + FormatPct(h) + "%"
}

func deltaCell(d Delta) string {
	if !d.Significant {
		return fmt.Sprintf("~ (p=%.2f)", d.PValue)
	}
	return fmt.Sprintf("%s%% (%s) p=%.3f", Signed(FormatPct(d.DeltaPct)), Signed(FormatMS(d.DeltaMS)), d.PValue)
}

func (t *Table) markdown(w io.Writer) error {
	var b strings.Builder
	for _, warn := range t.Warnings {
		fmt.Fprintf(&b, "> **WARNING** %s\n", warn)
	}
	if len(t.Warnings) > 0 {
		b.WriteString("\n")
	}
	t.mdAnswer(&b)
	var scenarios []string
	for _, r := range t.Rows {
		if len(scenarios) == 0 || scenarios[len(scenarios)-1] != r.Scenario {
			scenarios = append(scenarios, r.Scenario)
		}
	}
	for _, sc := range scenarios {
		var rows []Row
		for _, r := range t.Rows {
			if r.Scenario == sc {
				rows = append(rows, r)
			}
		}
		fmt.Fprintf(&b, "## %s\n\n", sc)
		fmt.Fprintf(&b, "Latency in ms, from each request's send: median over the repetitions (n), ± the %.0f%% confidence interval of the median.\n", 100*t.Confidence)
		fmt.Fprintf(&b, "Δ rows: change of the median vs **%s**; `~` = not significant (Mann-Whitney U across repetitions, p ≥ %g).\n\n", t.Baseline, t.Alpha)
		t.mdTable(&b, rows, false)
		b.WriteString("\nCorrected for coordinated omission (from each request's scheduled start; equal to the above when the target keeps up):\n\n")
		t.mdTable(&b, rows, true)
		b.WriteString("\n")
		t.mdDifferences(&b, rows)
		mdCostTable(&b, rows)
		mdThroughputTable(&b, rows)
		t.mdInteractions(&b, sc)
		t.mdWaterfalls(&b, sc)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "- Note: %s.\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *Table) mdTable(b *strings.Builder, rows []Row, corrected bool) {
	b.WriteString("| profile | target | n | qps | errors |")
	sep := "|---|---|--:|--:|--:|"
	for _, m := range Metrics {
		b.WriteString(" " + m + " |")
		sep += "--:|"
	}
	b.WriteString("\n" + sep + "\n")
	prev := ""
	for _, r := range rows {
		profile := r.Profile
		if profile == prev {
			profile = ""
		}
		prev = r.Profile
		name := r.Target
		if r.Baseline {
			name += " (baseline)"
		}
		qps := strconv.FormatFloat(r.QPS, 'f', 1, 64)
		if r.QPS < (1-QPSShortfall)*r.TargetQPS {
			qps += fmt.Sprintf(" of %g !", r.TargetQPS)
		}
		errs := strconv.FormatInt(r.Errors, 10)
		if r.Errors > 0 {
			errs += " !"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |", profile, name, NCell(r), qps, errs)
		vals, cis, deltas := r.LatencyMS, r.LatencyCIMS, r.VsBaseline
		if corrected {
			vals, cis, deltas = r.CorrectedMS, r.CorrectedCIMS, r.VsBaselineCorrected
		}
		for _, m := range Metrics {
			fmt.Fprintf(b, " %s%s |", FormatMS(vals[m]), Spread(vals[m], cis[m]))
		}
		b.WriteString("\n")
		if deltas != nil {
			fmt.Fprintf(b, "| | Δ %s | | | |", r.Target)
			for _, m := range Metrics {
				fmt.Fprintf(b, " %s |", deltaCell(deltas[m]))
			}
			b.WriteString("\n")
		}
	}
}

// DiffCell is a difference as the tables show it: "+0.210 [0.150, 0.270]",
// then the verdict when there is one.
func DiffCell(d Difference) string {
	s := Signed(FormatMS(d.MeanMS))
	if d.CIMS != nil {
		s += fmt.Sprintf(" [%s, %s]", FormatMS(d.CIMS[0]), FormatMS(d.CIMS[1]))
	}
	if d.Verdict != nil {
		s += " " + d.Verdict.Result
	}
	return s
}

// mdDifferences prints the rows' paired differences and, under them, the
// verdict lines.
func (t *Table) mdDifferences(b *strings.Builder, rows []Row) {
	var with []Row
	var lines []string
	family := 0
	for _, r := range rows {
		if r.Difference == nil {
			continue
		}
		with = append(with, r)
		for _, m := range Metrics {
			if d := r.Difference[m]; d.Verdict != nil {
				lines = append(lines, d.Line)
				family = d.Verdict.Family
			}
		}
	}
	if len(with) == 0 {
		return
	}
	interval, corrected := "Student-t interval", "Holm-corrected"
	if t.Sequential {
		interval, corrected = "anytime-valid confidence sequence (the run repeated until decided)", "Bonferroni-corrected"
	}
	fmt.Fprintf(b, "Paired difference vs **%s** (latency from send, ms): mean over repetition pairs of target − baseline [%.0f%% %s; with a verdict, at its %s level].\n\n",
		t.Baseline, 100*(1-t.Alpha), interval, corrected)
	b.WriteString("| profile | target | pairs |")
	sep := "|---|---|--:|"
	for _, m := range Metrics {
		b.WriteString(" " + m + " |")
		sep += "--:|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, r := range with {
		fmt.Fprintf(b, "| %s | %s | %d |", r.Profile, r.Target, r.Difference[Metrics[0]].Pairs)
		for _, m := range Metrics {
			fmt.Fprintf(b, " %s |", DiffCell(r.Difference[m]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "Verdicts against the margins (%s), %s over the %d verdicts of this table at family-wise α = %g:\n\n",
		strings.ReplaceAll(t.MarginsMS.String(), ",", ", "), corrected, family, t.Alpha)
	for _, l := range lines {
		fmt.Fprintf(b, "- %s\n", l)
	}
	b.WriteString("\n")
}

func (t *Table) csv(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"scenario", "profile", "target", "baseline", "latency", "n", "qps", "target_qps", "errors", "requests", "ci_confidence"}
	for _, m := range Metrics {
		head = append(head, m, m+"_ci_lo", m+"_ci_hi", m+"_delta_pct", m+"_delta_ms", m+"_p_value", m+"_significant")
	}
	// The paired differences and verdicts (plain latency: on the plain line only).
	head = append(head, "pairs")
	for _, m := range Metrics {
		head = append(head, m+"_diff_ms", m+"_diff_lo", m+"_diff_hi", m+"_diff_confidence", m+"_margin_ms", m+"_verdict")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range t.Rows {
		for _, kind := range []string{"plain", "corrected"} {
			vals, cis, deltas := r.LatencyMS, r.LatencyCIMS, r.VsBaseline
			if kind == "corrected" {
				vals, cis, deltas = r.CorrectedMS, r.CorrectedCIMS, r.VsBaselineCorrected
			}
			rec := []string{r.Scenario, r.Profile, r.Target, strconv.FormatBool(r.Baseline), kind, strconv.Itoa(r.N),
				f(r.QPS), f(r.TargetQPS), strconv.FormatInt(r.Errors, 10), strconv.FormatInt(r.Requests, 10), f(r.CIConfidence)}
			for _, m := range Metrics {
				rec = append(rec, f(vals[m]), f(cis[m][0]), f(cis[m][1]))
				if d, ok := deltas[m]; ok {
					rec = append(rec, f(d.DeltaPct), f(d.DeltaMS), f(d.PValue), strconv.FormatBool(d.Significant))
				} else {
					rec = append(rec, "", "", "", "")
				}
			}
			rec = append(rec, diffColumns(r, kind == "plain", f)...)
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// diffColumns are a CSV line's paired-difference columns; empty on the
// baseline and on the corrected line.
func diffColumns(r Row, plain bool, f func(float64) string) []string {
	out := make([]string, 1+6*len(Metrics))
	if !plain || r.Difference == nil {
		return out
	}
	out[0] = strconv.Itoa(r.Difference[Metrics[0]].Pairs)
	for i, m := range Metrics {
		d := r.Difference[m]
		c := out[1+6*i : 1+6*(i+1)]
		c[0], c[3] = f(d.MeanMS), f(d.Confidence)
		if d.CIMS != nil {
			c[1], c[2] = f(d.CIMS[0]), f(d.CIMS[1])
		}
		if d.Verdict != nil {
			c[4], c[5] = f(d.Verdict.MarginMS), d.Verdict.Result
		}
	}
	return out
}

// bench writes one Go benchmark line per repetition:
//
//	BenchmarkBookload/scenario=smoke/profile=100rps-10c/target=tuned 100 0.81 avg-ms 0.64 p50-ms ... 99.9 qps 0 errors
//
// so that `benchstat -col /target file` compares the targets.
func (t *Table) bench(w io.Writer) error {
	var b strings.Builder
	b.WriteString("pkg: bookload\n")
	for _, r := range t.Rows {
		for _, rep := range t.reps[rowKey{r.Scenario, r.Profile, r.Target}] {
			fmt.Fprintf(&b, "BenchmarkBookload/scenario=%s/profile=%s/target=%s %d", r.Scenario, r.Profile, r.Target, rep.Requests)
			for _, m := range Metrics {
				v, _ := rep.Latency.Plain.SummaryMS.Metric(m)
				fmt.Fprintf(&b, " %g %s-ms", v, m)
			}
			for _, m := range Metrics {
				v, _ := rep.Latency.Corrected.SummaryMS.Metric(m)
				fmt.Fprintf(&b, " %g %s-corrected-ms", v, m)
			}
			fmt.Fprintf(&b, " %g qps %d errors\n", rep.ActualQPS, rep.Errors)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCostTable prints the rows' cluster cost, when any recorded one: per
// repetition window, each figure's median [interval] as for the latencies.
func mdCostTable(b *strings.Builder, rows []Row) {
	var with []Row
	for _, r := range rows {
		if r.ClusterCost != nil {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return
	}
	b.WriteString("Cluster cost per repetition window: median [interval] (kubelet summary API; queries = requests with a 2xx):\n\n")
	b.WriteString("| profile | target | n | mesh CPU-s | apps CPU-s | clients CPU-s | mesh peak MiB | queries per mesh core | queries per core (apps+mesh) |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range with {
		c := r.ClusterCost
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", r.Profile, r.Target, c.N,
			c.MeshCPUSeconds.Format(2), c.AppsCPUSeconds.Format(2), c.ClientsCPUSeconds.Format(2),
			c.MeshPeakMiB.Format(0), c.QueriesPerMeshCore.Format(0), c.QueriesPerCore.Format(0))
	}
	b.WriteString("\n")
	mdMeshCostTable(b, with)
}

// mdThroughputTable prints the rows' throughput, when any moved bulk
// bodies: Gbit/s and the CPU per Gbit/s of each source that measured it.
func mdThroughputTable(b *strings.Builder, rows []Row) {
	var with []Row
	for _, r := range rows {
		if r.Throughput != nil {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return
	}
	b.WriteString("Throughput: median [interval] over the repetitions; CPU per Gbit/s = CPU-seconds per gigabit moved (cores busy per Gbit/s); process = bookload's own process (load generator, and the echo server when in-process), mesh and apps+mesh from the cluster cost:\n\n")
	b.WriteString("| profile | target | n | Gbit/s | process CPU per Gbit/s | mesh CPU per Gbit/s | apps+mesh CPU per Gbit/s |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|\n")
	for _, r := range with {
		tp := r.Throughput
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s |\n", r.Profile, r.Target, tp.N, tp.GbitPerS.Format(2),
			tp.ProcessCoresPerGbit.Format(3), tp.MeshCoresPerGbit.Format(3), tp.AppsMeshCoresPerGbit.Format(3))
	}
	b.WriteString("\n")
}

// mdInteractions prints the matrix's interaction lines of scenario sc.
func (t *Table) mdInteractions(b *strings.Builder, sc string) {
	head := false
	for _, in := range t.Interactions {
		if in.Scenario != sc {
			continue
		}
		if !head {
			fmt.Fprintf(b, "Interactions (does the mode change the setting's effect?): (setting - %s under the mode) - (the same under %s), mean of paired repetitions, plain latency, %.0f%% Student-t interval, not corrected across lines:\n\n",
				in.BaseSetting, in.BaseMode, 100*(1-t.Alpha))
			head = true
		}
		for _, m := range InteractionLineMetrics {
			if im, ok := in.Metrics[m]; ok {
				fmt.Fprintf(b, "- %s\n", im.Line)
			}
		}
	}
	if head {
		b.WriteString("\n")
	}
}
