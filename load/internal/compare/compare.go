// Package compare turns stored runs into the comparison table: one row per
// (profile, target) with the median across repetitions of achieved rate,
// errors and avg/p50/p75/p90/p99/p99.9 latency, each with a confidence
// interval, and for every non-baseline target the change against the baseline
// with a Mann-Whitney U test across repetitions: a change that is not
// significant is shown as "~". It also says, loudly, when a target did not
// carry the offered rate or answered with errors, and how many repetitions
// are needed when there are too few to ever reach significance.
package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/throughput"
)

// Metrics are the latency columns, in table order.
var Metrics = []string{"avg", "p50", "p75", "p90", "p99", "p99.9"}

// QPSShortfall is how far below the requested rate a repetition may fall
// before the table warns that the target could not carry the load.
const QPSShortfall = 0.02

// Options tune a comparison.
type Options struct {
	Baseline   string  // target name; "" means the first target of the first run
	Alpha      float64 // significance level; 0 means 0.05
	Confidence float64 // of the median's interval; 0 means 0.95
	// Margins (metric -> ms) turn the paired differences of those metrics
	// into verdicts (see verdict.go); none: differences and intervals only.
	Margins Margins
}

// Table is the comparison, also the --format json document.
type Table struct {
	Baseline   string   `json:"baseline"`
	Alpha      float64  `json:"alpha"`
	Confidence float64  `json:"ci_confidence_wanted"`
	Runs       []string `json:"runs"`
	Rows       []Row    `json:"rows"`
	Warnings   []string `json:"warnings"`
	Notes      []string `json:"notes"`
	// MarginsMS are the --margin flags (metric -> ms); DifferenceMethod says
	// how each row's difference and verdict are computed.
	MarginsMS        Margins `json:"margins_ms"`
	DifferenceMethod string  `json:"difference_method"`
	// Sequential is true when a run in the table went on until its verdicts
	// were decided (--until-decided): its intervals are then confidence
	// sequences (verdict.go), valid however often the data were looked at.
	Sequential bool `json:"sequential"`
	// Waterfalls say where the time went, hop by hop, for each (scenario,
	// profile) whose answers carried Server-Timing (waterfall.go);
	// WaterfallMethod says which split they show.
	Waterfalls      []Waterfall `json:"waterfalls"`
	WaterfallMethod string      `json:"waterfall_method"`
	// Interactions are the app-behaviour × mesh matrix's lines, for targets
	// named MODE.SETTING (interaction.go); ThroughputMethod says how each
	// row's Throughput is computed.
	Interactions      []Interaction `json:"interactions"`
	InteractionMethod string        `json:"interaction_method"`
	ThroughputMethod  string        `json:"throughput_method"`
	// reps keeps each row's repetitions for the benchmark format and the
	// pairing of the differences; repRuns the id of the run of each;
	// invalidReps those left out (invalid.go).
	reps        map[rowKey][]results.Rep
	repRuns     map[rowKey][]string
	invalidReps map[rowKey][]InvalidRep
}

// Row is one (scenario, profile, target).
type Row struct {
	Scenario  string  `json:"scenario"`
	Profile   string  `json:"profile"`
	Target    string  `json:"target"`
	Baseline  bool    `json:"baseline"`
	N         int     `json:"n"`
	QPS       float64 `json:"qps"` // median achieved rate
	TargetQPS float64 `json:"target_qps"`
	Errors    int64   `json:"errors"` // over all repetitions
	Requests  int64   `json:"requests"`
	// LatencyMS is the median across repetitions of each metric (plain
	// latency, from each request's send); LatencyCIMS its confidence interval.
	LatencyMS   map[string]float64    `json:"latency_ms"`
	LatencyCIMS map[string][2]float64 `json:"latency_ci_ms"`
	// CIConfidence is the interval's actual confidence: below the wanted one
	// when n is too small for it (then the interval is min..max).
	CIConfidence float64 `json:"ci_confidence"`
	// Corrected* are the same for latency from each request's scheduled start.
	CorrectedMS   map[string]float64    `json:"corrected_latency_ms"`
	CorrectedCIMS map[string][2]float64 `json:"corrected_latency_ci_ms"`
	// VsBaseline compares the plain latency with the baseline's; absent on the
	// baseline row.
	VsBaseline          map[string]Delta `json:"vs_baseline,omitempty"`
	VsBaselineCorrected map[string]Delta `json:"vs_baseline_corrected,omitempty"`
	// Difference is each metric's paired difference to the baseline (plain
	// latency), with a verdict where a margin was given; absent on the
	// baseline row.
	Difference map[string]Difference `json:"difference,omitempty"`
	Warnings   []string              `json:"warnings,omitempty"`
	// Invalid are the repetitions left out of the row (and of every
	// interval and verdict): their data path was not proven.
	Invalid []InvalidRep `json:"invalid,omitempty"`
	// ClusterCost is what the repetitions cost the cluster (bookload scale,
	// bookload run --cluster-cost), each figure's median and interval as
	// for the latencies; absent when no repetition recorded it.
	ClusterCost *clustercost.Summary `json:"cluster_cost,omitempty"`
	// Throughput is the Gbit/s moved and CPU per Gbit/s (package
	// throughput), for rows that move bulk bodies; absent otherwise.
	Throughput *throughput.Summary `json:"throughput,omitempty"`
	// ProxyTraversals is how many times a request passed a mesh proxy
	// (traversals.go); 0 without a data-path proof or Server-Timing.
	ProxyTraversals float64 `json:"proxy_traversals,omitempty"`
}

// Delta is one metric's change against the baseline.
type Delta struct {
	DeltaPct    float64 `json:"delta_pct"`
	DeltaMS     float64 `json:"delta_ms"`
	PValue      float64 `json:"p_value"`
	Significant bool    `json:"significant"`
	// Detectable is false when the repetition counts cannot reach p < alpha
	// whatever the data (e.g. 3 against 3).
	Detectable bool `json:"detectable"`
}

type rowKey struct{ scenario, profile, target string }

// Build compares the repetitions of runs.
func Build(runs []*results.Loaded, opts Options) (*Table, error) {
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if opts.Confidence == 0 {
		opts.Confidence = 0.95
	}
	t := &Table{Alpha: opts.Alpha, Confidence: opts.Confidence, Warnings: []string{}, Notes: []string{},
		MarginsMS: opts.Margins, DifferenceMethod: DifferenceMethod,
		Waterfalls: []Waterfall{}, WaterfallMethod: WaterfallMethod,
		Interactions: []Interaction{}, InteractionMethod: InteractionMethod, ThroughputMethod: throughput.Method,
		reps: map[rowKey][]results.Rep{}, repRuns: map[rowKey][]string{}, invalidReps: map[rowKey][]InvalidRep{}}
	if t.MarginsMS == nil {
		t.MarginsMS = Margins{}
	}
	runs = splitEngines(runs)
	var scenarios, targets []string
	profiles := map[string][]string{}
	roots := map[string]string{}              // scenario -> the service it loads
	targetRun := map[string]map[string]bool{} // target -> run ids it came from
	for _, l := range runs {
		t.Runs = append(t.Runs, l.Dir)
		name := l.Run.Scenario.Name
		if !slices.Contains(scenarios, name) {
			scenarios = append(scenarios, name)
			roots[name] = l.Run.Scenario.Service
		}
		for _, p := range l.Run.Scenario.Profiles {
			if !slices.Contains(profiles[name], p.Name) {
				profiles[name] = append(profiles[name], p.Name)
			}
		}
		for _, tg := range l.Run.Targets {
			if !slices.Contains(targets, tg.Name) {
				targets = append(targets, tg.Name)
			}
			if targetRun[tg.Name] == nil {
				targetRun[tg.Name] = map[string]bool{}
			}
			targetRun[tg.Name][l.Run.ID] = true
		}
		for _, r := range l.Reps {
			k := rowKey{r.Scenario, r.Profile.Name, r.Target}
			if t.invalid(k, l.Run.ID, r.Repetition, r.EngineMetadata) {
				continue
			}
			t.reps[k] = append(t.reps[k], r)
			t.repRuns[k] = append(t.repRuns[k], l.Run.ID)
		}
		if sq := l.Run.Sequential; sq != nil {
			t.Sequential, t.DifferenceMethod = true, SequentialDifferenceMethod
			for _, p := range slices.Sorted(maps.Keys(sq.Stopped)) {
				t.Notes = append(t.Notes, fmt.Sprintf("run %s, %s: %s", l.Run.ID, p, sq.Stopped[p]))
			}
		}
		if l.Run.Status != results.StatusComplete {
			note := fmt.Sprintf("run %s is partial: %d of %d planned repetitions", l.Run.ID, len(l.Run.Done), len(l.Run.Plan))
			if l.Run.Note != "" {
				note += " (" + l.Run.Note + ")"
			}
			t.Notes = append(t.Notes, note)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("no targets in %s", strings.Join(t.Runs, ", "))
	}
	t.Baseline = resolveBaseline(opts.Baseline, targets)
	if t.Baseline == "" {
		t.Baseline = targets[0]
	}
	if !slices.Contains(targets, t.Baseline) {
		return nil, fmt.Errorf("--baseline %s: not a target of these runs (targets: %s)", t.Baseline, strings.Join(targets, ", "))
	}
	// The baseline first, the others in the order they were given.
	ordered := append([]string{t.Baseline}, slices.DeleteFunc(slices.Clone(targets), func(s string) bool { return s == t.Baseline })...)
	if len(runs) > 1 {
		t.notInterleaved(ordered, targetRun)
	}

	tooFew := map[string]bool{}
	for _, sc := range scenarios {
		for _, p := range profiles[sc] {
			var base *Row
			for _, tg := range ordered {
				reps := t.reps[rowKey{sc, p, tg}]
				if len(reps) == 0 {
					continue
				}
				row := t.row(sc, p, tg, reps)
				if tg == t.Baseline {
					row.Baseline = true
					base = &row
				} else if base != nil {
					bReps := t.reps[rowKey{sc, p, t.Baseline}]
					row.VsBaseline = deltas(bReps, reps, base.LatencyMS, row.LatencyMS, plainOf, opts.Alpha)
					row.VsBaselineCorrected = deltas(bReps, reps, base.CorrectedMS, row.CorrectedMS, correctedOf, opts.Alpha)
					if stats.MinPValue(len(bReps), len(reps)) >= opts.Alpha {
						tooFew[fmt.Sprintf("%d against %d", len(bReps), len(reps))] = true
					}
				}
				t.Warnings = append(t.Warnings, row.Warnings...)
				t.Rows = append(t.Rows, row)
			}
		}
	}
	for _, pair := range slices.Sorted(maps.Keys(tooFew)) {
		t.Notes = append(t.Notes, fmt.Sprintf(
			"%s repetitions can never reach p < %g with Mann-Whitney, so every change shows as ~: "+
				"run at least %d repetitions per target (--repetitions %d) to detect a difference",
			pair, opts.Alpha, stats.RepetitionsNeeded(opts.Alpha), stats.RepetitionsNeeded(opts.Alpha)))
	}
	t.invalidWarnings()
	t.differences(opts.Margins)
	t.interactions()
	if err := t.waterfalls(roots, opts.Margins); err != nil {
		return nil, err
	}
	t.ciNote()
	t.precisionNote(ordered)
	return t, nil
}

// precisionNote says which targets' latencies come from a remote fortio's
// bucket histogram (engine_metadata.precision "fortio-buckets", set by package
// fortiorest) rather than from per-request samples.
func (t *Table) precisionNote(targets []string) {
	var remote []string
	for _, tg := range targets {
		for k, reps := range t.reps {
			if k.target != tg || slices.Contains(remote, tg) {
				continue
			}
			for _, r := range reps {
				if p, _ := r.EngineMetadata["precision"].(string); p == "fortio-buckets" {
					remote = append(remote, tg)
					break
				}
			}
		}
	}
	if len(remote) == 0 {
		return
	}
	t.Notes = append(t.Notes, fmt.Sprintf(
		"%s ran on a remote fortio (fortio+http): latencies are rebuilt from fortio's histogram buckets "+
			"(count, avg, min and max exact; percentiles within a bucket, 0.1 ms below 1.2 ms, 10-25%% of the value up to 100 ms, coarser above), "+
			"and their corrected latency equals the plain one (no per-request send times)",
		strings.Join(remote, ", ")))
}

func (t *Table) notInterleaved(targets []string, from map[string]map[string]bool) {
	for _, a := range targets[1:] {
		shared := false
		for id := range from[a] {
			if from[t.Baseline][id] {
				shared = true
			}
		}
		if !shared {
			t.Notes = append(t.Notes, fmt.Sprintf(
				"%s and %s come from different runs, not interleaved: drift between the runs can look like a difference", a, t.Baseline))
		}
	}
}

func (t *Table) ciNote() {
	minConf, minN := 1.0, 0
	for _, r := range t.Rows {
		if r.CIConfidence < minConf {
			minConf, minN = r.CIConfidence, r.N
		}
	}
	if minConf < t.Confidence {
		need := stats.SizeForConfidence(t.Confidence)
		t.Notes = append(t.Notes, fmt.Sprintf(
			"with %d repetitions the ± interval is the min..max of the repetitions, which holds the median with %.1f%% confidence; %d repetitions give %.0f%%",
			minN, 100*minConf, need, 100*t.Confidence))
	}
}

func plainOf(r results.Rep) latency.Summary     { return r.Latency.Plain.SummaryMS }
func correctedOf(r results.Rep) latency.Summary { return r.Latency.Corrected.SummaryMS }

func column(reps []results.Rep, of func(results.Rep) latency.Summary, metric string) []float64 {
	xs := make([]float64, len(reps))
	for i, r := range reps {
		xs[i], _ = of(r).Metric(metric)
	}
	return xs
}

func (t *Table) row(sc, profile, tg string, reps []results.Rep) Row {
	row := Row{
		Scenario: sc, Profile: profile, Target: tg, N: len(reps), TargetQPS: reps[0].Profile.QPS,
		LatencyMS: map[string]float64{}, LatencyCIMS: map[string][2]float64{},
		CorrectedMS: map[string]float64{}, CorrectedCIMS: map[string][2]float64{},
	}
	qps := make([]float64, len(reps))
	short := 0
	codes := map[string]int64{}
	for i, r := range reps {
		qps[i] = r.ActualQPS
		row.Errors += r.Errors
		row.Requests += r.Requests
		if r.ActualQPS < (1-QPSShortfall)*r.RequestedQPS {
			short++
		}
		for c, n := range r.Codes {
			if code, err := strconv.Atoi(c); err != nil || code < 200 || code > 299 {
				codes[c] += n
			}
		}
	}
	row.QPS = stats.Median(qps)
	row.ClusterCost = clustercost.Summarize(reps, t.Confidence)
	row.Throughput = throughput.Summarize(reps, t.Confidence)
	row.ProxyTraversals = proxyTraversals(reps)
	row.CIConfidence = 1
	for _, m := range Metrics {
		s := stats.Summarize(column(reps, plainOf, m), t.Confidence)
		row.LatencyMS[m], row.LatencyCIMS[m] = s.Median, [2]float64{s.Lo, s.Hi}
		row.CIConfidence = math.Min(row.CIConfidence, s.Confidence)
		c := stats.Summarize(column(reps, correctedOf, m), t.Confidence)
		row.CorrectedMS[m], row.CorrectedCIMS[m] = c.Median, [2]float64{c.Lo, c.Hi}
	}
	who := fmt.Sprintf("%s %s %s", sc, profile, tg)
	if short > 0 {
		row.Warnings = append(row.Warnings, fmt.Sprintf(
			"%s: achieved %.1f qps, %.1f%% below the %g requested, in %d of %d repetitions: the target (or the client) could not carry this rate, and its latencies are for a lower load than asked",
			who, row.QPS, 100*(1-row.QPS/row.TargetQPS), row.TargetQPS, short, len(reps)))
	}
	row.Warnings = append(row.Warnings, droppedWarning(who, reps)...)
	if row.Errors > 0 {
		row.Warnings = append(row.Warnings, fmt.Sprintf("%s: %d errors in %d requests (%.2f%%): %s; error responses are included in the latencies",
			who, row.Errors, row.Requests, 100*float64(row.Errors)/float64(max(row.Requests, 1)), describeCodes(codes)))
	}
	return row
}

func describeCodes(codes map[string]int64) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		name := "HTTP " + c
		if c == "-1" {
			name = "connection errors"
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", name, codes[c]))
	}
	return strings.Join(parts, ", ")
}

func deltas(base, other []results.Rep, baseMed, otherMed map[string]float64, of func(results.Rep) latency.Summary, alpha float64) map[string]Delta {
	out := map[string]Delta{}
	detectable := stats.MinPValue(len(base), len(other)) < alpha
	for _, m := range Metrics {
		p := stats.MannWhitney(column(base, of, m), column(other, of, m))
		d := Delta{DeltaMS: otherMed[m] - baseMed[m], PValue: p, Significant: p < alpha, Detectable: detectable}
		if baseMed[m] != 0 {
			d.DeltaPct = 100 * d.DeltaMS / baseMed[m]
		}
		out[m] = d
	}
	return out
}
