package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// synthPage records n answers of /productpage into hops as the engine
// does: every part of the call tree with a little noise, drift added to
// reviews' own time (a neighbour), ratingsLate to the reviews -> ratings
// hop alone.
func synthPage(rng *rand.Rand, n int, drift, ratingsLate float64) *hops.Result {
	noise := func(base float64) float64 { return base + 0.05*rng.ExpFloat64() }
	d := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	r := hops.NewResult()
	for range n {
		ratingsApp := noise(0.3)
		ratings := ratingsApp + noise(0.2) + ratingsLate
		reviewsApp := noise(1.0) + drift + ratings
		reviews := reviewsApp + noise(0.2)
		detailsApp := noise(0.5)
		details := detailsApp + noise(0.2)
		app := noise(1.5) + math.Max(reviews, details)
		latency := app + noise(0.2)
		r.Add([]hops.Metric{{Name: "app", Dur: d(app)}, {Name: "details", Dur: d(details)}, {Name: "details.app", Dur: d(detailsApp)},
			{Name: "reviews", Dur: d(reviews)}, {Name: "reviews.app", Dur: d(reviewsApp)},
			{Name: "reviews.ratings", Dur: d(ratings)}, {Name: "reviews.ratings.app", Dur: d(ratingsApp)}}, d(latency), d(latency))
	}
	return r
}

// synthWaterfallRun: "no-mesh" and "late" (the reviews -> ratings hop
// late by ratingsLate ms), 5 interleaved repetitions of 2000 answers.
func synthWaterfallRun(t *testing.T, ratingsLate float64) *results.Loaded {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	sc := &scenario.Scenario{Name: "productpage", Service: "productpage", Profiles: []scenario.Profile{profile}}
	l := &results.Loaded{Dir: "results/w", Run: results.Run{ID: "w", Status: results.StatusComplete, Scenario: sc,
		Targets: []loadtarget.Target{{Name: "no-mesh"}, {Name: "late"}}}}
	for rep := 1; rep <= 5; rep++ {
		drift := 0.5 * rng.Float64()
		for _, tg := range []string{"no-mesh", "late"} {
			late := map[string]float64{"late": ratingsLate}[tg]
			doc, err := synthPage(rng, 2000, drift, late).Doc()
			if err != nil {
				t.Fatal(err)
			}
			s := synthSummary(rng, 100, 0)
			l.Reps = append(l.Reps, results.Rep{Scenario: sc.Name, Target: tg, Profile: profile, Repetition: rep,
				RequestedQPS: 100, ActualQPS: 100, Requests: 2000, Codes: map[string]int64{"200": 2000}, Hops: doc,
				Latency: results.Latency{Plain: results.Distribution{SummaryMS: s}, Corrected: results.Distribution{SummaryMS: s}}})
		}
	}
	return l
}

// A hop made late shows on that hop, with an interval around the delay
// and a verdict against the margin, and on no other part.
func TestWaterfallPutsTheDelayOnItsHop(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthWaterfallRun(t, 0.4)}, Options{Margins: Margins{"p50": 0.2, "p90": 0.2, "p99": 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Waterfalls) != 1 {
		t.Fatalf("%d waterfalls", len(tb.Waterfalls))
	}
	w := tb.Waterfalls[0]
	if strings.Join(w.Path, ",") != "reviews,reviews.ratings" || w.Root != "productpage" || len(w.Targets) != 2 || !w.Targets[0].Baseline {
		t.Fatalf("waterfall %+v", w)
	}
	late := w.Targets[1]
	for i, s := range late.Splits {
		if s.Metric != WaterfallPercentiles[i] || s.Requests == 0 {
			t.Fatalf("split %d: %+v", i, s)
		}
		// The stack is the mean latency of the requests in the bucket:
		// within the bucket's 1% of its lowest value.
		if s.TotalMS < s.BucketMS*0.999 || s.TotalMS > s.BucketMS*1.011 {
			t.Errorf("%s: stack %.3f ms, bucket from %.3f ms", s.Metric, s.TotalMS, s.BucketMS)
		}
		for _, seg := range s.Segments {
			d := seg.Difference
			if d == nil || d.Verdict == nil || d.CIMS == nil || d.Pairs != 5 {
				t.Fatalf("%s %s: difference %+v", s.Metric, seg.Key, d)
			}
			t.Log(d.Line)
			if seg.Key == "hop:reviews.ratings" {
				if d.CIMS[0] > 0.4 || d.CIMS[1] < 0.4 || d.Verdict.Result != Exceeds {
					t.Errorf("the late hop at %s: %s", s.Metric, d.Line)
				}
				continue
			}
			if r := d.Verdict.Result; r == Exceeds || r == Faster || math.Abs(d.MeanMS) > 0.1 {
				t.Errorf("%s took some of the delay: %s", seg.Key, d.Line)
			}
		}
		if d := s.TotalDifference; d == nil || math.Abs(d.MeanMS-0.4) > 0.1 || d.Verdict != nil {
			t.Errorf("%s total difference %+v", s.Metric, d)
		}
	}
	if f := late.Splits[0].Segments[0].Difference.Verdict.Family; f != 3*8 {
		t.Errorf("hop verdicts in one family of %d, want 24 (3 percentiles x 8 parts)", f)
	}
	// The table's own verdicts are a family of their own.
	if f := tb.Rows[1].Difference["p99"].Verdict.Family; f != 3 {
		t.Errorf("end-to-end verdicts in a family of %d", f)
	}
}

// The writers print the waterfall the table holds.
func TestWaterfallOutputs(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthWaterfallRun(t, 0.4)}, Options{Margins: Margins{"p99": 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := tb.Write(&md, "md"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Where the time goes", "requests at that percentile", "| p50 | no-mesh (baseline) |",
		"reviews → ratings", "∥ productpage → details", "| | Δ late |", "p99 reviews → ratings +0.3"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	var js bytes.Buffer
	if err := tb.Write(&js, "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Waterfalls []struct {
			Targets []struct {
				Splits []struct {
					Segments []struct {
						Key        string          `json:"key"`
						MS         float64         `json:"ms"`
						Difference json.RawMessage `json:"difference"`
					} `json:"segments"`
				} `json:"splits"`
			} `json:"targets"`
		} `json:"waterfalls"`
		Method string `json:"waterfall_method"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Waterfalls) != 1 || len(doc.Waterfalls[0].Targets[1].Splits[2].Segments) != 8 || !strings.Contains(doc.Method, "not sums of percentiles") {
		t.Errorf("json waterfall %+v", doc)
	}
	var c bytes.Buffer
	if err := tb.Write(&c, "waterfall-csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Header, then 2 targets x 3 percentiles x (8 parts + the total).
	if len(recs) != 1+2*3*9 || recs[0][0] != "scenario" {
		t.Fatalf("%d csv records, header %v", len(recs), recs[0])
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	found := false
	for _, r := range recs[1:] {
		if r[col["target"]] == "late" && r[col["percentile"]] == "p99" && r[col["part"]] == "hop:reviews.ratings" {
			found = r[col["verdict"]] == Exceeds && r[col["diff_ms"]] != ""
		}
	}
	if !found {
		t.Errorf("no p99 reviews -> ratings line with its verdict:\n%s", c.String())
	}
}

// Runs without hops have no waterfall, and the other formats are unchanged.
func TestNoWaterfallWithoutHops(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthPairedRun(1, 5, 0)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Waterfalls) != 0 {
		t.Errorf("waterfalls %+v", tb.Waterfalls)
	}
	var md bytes.Buffer
	if err := tb.Write(&md, "md"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Where the time goes") {
		t.Error("a waterfall section without hops")
	}
}
