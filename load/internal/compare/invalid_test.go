package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/meshproof"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// A repetition whose data path was not proven is left out of the row, the
// paired differences and the verdict, and every table says so.
func TestInvalidRepetitionsLeftOut(t *testing.T) {
	l := synthPairedRun(7, 6, 0.5)
	for i, r := range l.Reps {
		if r.Target == "ambient" && r.Repetition == 2 {
			// Far off, so that counting it would show.
			r.Latency.Plain.SummaryMS.P99 += 100
			r.EngineMetadata = map[string]any{meshproof.MetadataKey: map[string]any{
				"valid": false, "reasons": []string{"pod x is not enrolled in ambient"}}}
			l.Reps[i] = r
		}
	}
	tb, err := Build([]*results.Loaded{l}, Options{Baseline: "no-mesh", Margins: Margins{"p99": 1}})
	if err != nil {
		t.Fatal(err)
	}
	var amb Row
	for _, r := range tb.Rows {
		if r.Target == "ambient" {
			amb = r
		}
	}
	if amb.N != 5 || len(amb.Invalid) != 1 || amb.Invalid[0].Repetition != 2 || NCell(amb) != "5 (+1 invalid !)" {
		t.Fatalf("ambient row: n %d, invalid %+v", amb.N, amb.Invalid)
	}
	d := amb.Difference["p99"]
	if d.Pairs != 5 || d.MeanMS > 5 {
		t.Errorf("p99 difference over %d pairs, mean %.2f ms: the invalid repetition counted", d.Pairs, d.MeanMS)
	}
	var md bytes.Buffer
	if err := tb.Write(&md, "md"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ambient rep 2 (run x) is INVALID", "not enrolled in ambient", "| 5 (+1 invalid !) |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// The mesh's cost per component goes beside each verdict line.
func TestCostClause(t *testing.T) {
	stat := func(m float64) *clustercost.Stat {
		return &clustercost.Stat{Median: m, CI: [2]float64{m - 0.01, m + 0.01}}
	}
	tb := &Table{Rows: []Row{
		{Scenario: "s", Profile: "p", Target: "no-mesh", Baseline: true, ClusterCost: &clustercost.Summary{N: 4,
			Components: map[string]clustercost.ComponentCost{"mesh": {VCPUPer1000RPS: stat(0.05)}}}},
	}}
	r := Row{Scenario: "s", Profile: "p", Target: "sidecar", ClusterCost: &clustercost.Summary{N: 4, Components: map[string]clustercost.ComponentCost{
		"sidecars": {VCPUPer1000RPS: stat(0.4)}, "istiod": {VCPUPer1000RPS: stat(0.02)}, "mesh": {VCPUPer1000RPS: stat(0.42)}},
		QueriesPerCore: &clustercost.Stat{Median: 650, CI: [2]float64{610, 690}}}}
	got := tb.costClause(r, Difference{Verdict: &Verdict{}})
	want := "; mesh vCPU per 1000 RPS (median [interval], 4 repetitions): sidecars 0.400 [0.390..0.410], istiod 0.020 [0.010..0.030], mesh 0.420 [0.410..0.430]; queries per core (apps and mesh) 650 [610..690]; no-mesh's mesh 0.050 [0.040..0.060]"
	if got != want {
		t.Errorf("cost clause\n got %q\nwant %q", got, want)
	}
	if s := tb.costClause(r, Difference{}); s != "" {
		t.Errorf("without a verdict: %q", s)
	}
}
