package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// synthSummary records n request latencies into an HdrHistogram as an
// engine does and summarizes it: a 0.5 ms floor plus a log-normal body
// (median 0.6 ms, p99 ~2.9 ms in all), plus shift.
func synthSummary(rng *rand.Rand, n int, shift float64) latency.Summary {
	h := latency.NewHistogram()
	var sum time.Duration
	for range n {
		d := time.Duration((0.5 + 0.6*math.Exp(0.6*rng.NormFloat64()) + shift) * float64(time.Millisecond))
		if err := h.RecordValue(latency.Micros(d)); err != nil {
			panic(err)
		}
		sum += d
	}
	return latency.Summarize(h, sum)
}

// synthPairedRun: baseline "no-mesh" and "ambient", reps repetitions each
// of 3000 requests (100 rps for 30 s), ambient's latencies shifted by
// shift ms. Each repetition adds the same drift, up to 1 ms, to both
// targets (a neighbour on the machine), which pairing must cancel; ambient's
// repetitions are stored in another order than no-mesh's, so pairing by
// position would not.
func synthPairedRun(seed uint64, reps int, shift float64) *results.Loaded {
	rng := rand.New(rand.NewPCG(seed, 99))
	sc := &scenario.Scenario{Name: "details-100rps-10c", Profiles: []scenario.Profile{profile}}
	l := &results.Loaded{Dir: "results/x", Run: results.Run{ID: "x", Status: results.StatusComplete, Scenario: sc,
		Targets: []loadtarget.Target{{Name: "no-mesh"}, {Name: "ambient"}}}}
	var ambient []results.Rep
	for r := 1; r <= reps; r++ {
		drift := rng.Float64()
		for _, tg := range []string{"no-mesh", "ambient"} {
			s := synthSummary(rng, 3000, drift+map[string]float64{"ambient": shift}[tg])
			rep := results.Rep{Scenario: sc.Name, Target: tg, Profile: profile, Repetition: r, RequestedQPS: 100, ActualQPS: 100,
				Requests: 3000, Codes: map[string]int64{"200": 3000},
				Latency: results.Latency{Plain: results.Distribution{SummaryMS: s}, Corrected: results.Distribution{SummaryMS: s}}}
			if tg == "ambient" {
				ambient = append(ambient, rep)
			} else {
				l.Reps = append(l.Reps, rep)
			}
		}
	}
	slices.Reverse(ambient)
	l.Reps = append(l.Reps, ambient...)
	return l
}

func p99Of(t *testing.T, tb *Table) Difference {
	t.Helper()
	if len(tb.Rows) != 2 || tb.Rows[1].Target != "ambient" {
		t.Fatalf("rows %+v", tb.Rows)
	}
	return tb.Rows[1].Difference["p99"]
}

// TestAAWithin: the same distribution under two names is within a 0.5 ms
// p99 margin in at least 95% of seeded trials (5 repetitions each).
func TestAAWithin(t *testing.T) {
	const trials = 200
	within, exceeds := 0, 0
	for i := range trials {
		tb, err := Build([]*results.Loaded{synthPairedRun(uint64(i), 5, 0)}, Options{Margins: Margins{"p99": 0.5}})
		if err != nil {
			t.Fatal(err)
		}
		switch d := p99Of(t, tb); d.Verdict.Result {
		case Within:
			within++
		case Exceeds, Faster:
			exceeds++
			t.Logf("trial %d: %s", i, d.Line)
		}
	}
	rate := float64(within) / trials
	t.Logf("A/A: within a 0.5 ms p99 margin in %d of %d trials (%.1f%%), a difference claimed in %d", within, trials, 100*rate, exceeds)
	if rate < 0.95 || exceeds > 0 {
		t.Errorf("A/A within in %.1f%% of trials (want >= 95%%), a difference claimed in %d", 100*rate, exceeds)
	}
}

// TestShiftDetected: +0.5 ms on every request of one target is found: the
// interval covers 0.5 ms and excludes 0, and the verdict against a 0.2 ms
// margin is "exceeds".
func TestShiftDetected(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthPairedRun(1, 5, 0.5)}, Options{Margins: Margins{"p99": 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	d := p99Of(t, tb)
	t.Log(d.Line)
	if d.Pairs != 5 || d.CIMS == nil || d.CIMS[0] > 0.5 || d.CIMS[1] < 0.5 || d.CIMS[0] <= 0 || d.Verdict.Result != Exceeds {
		t.Errorf("+0.5 ms shift: %+v %+v", d, d.Verdict)
	}
	if !regexp.MustCompile(`^ambient vs no-mesh, details-100rps-10c 100rps-10c: p99 \+0\.\d+ ms \[0\.\d+, 0\.\d+\], exceeds 0\.2 ms$`).MatchString(d.Line) {
		t.Errorf("line %q", d.Line)
	}

	// Over seeded trials the shift is always detected (the interval excludes
	// 0), and the interval covers the true shift about as often as it claims
	// (95%: one verdict, no correction). Against the 0.2 ms margin, 5
	// repetitions have ~90% power: the count is logged, not asserted.
	const trials = 200
	covered, detected, found := 0, 0, 0
	for i := range trials {
		tb, _ := Build([]*results.Loaded{synthPairedRun(uint64(1000+i), 5, 0.5)}, Options{Margins: Margins{"p99": 0.2}})
		d := p99Of(t, tb)
		if d.CIMS[0] <= 0.5 && 0.5 <= d.CIMS[1] {
			covered++
		}
		if d.CIMS[0] > 0 {
			detected++
		}
		if d.Verdict.Result == Exceeds {
			found++
		}
	}
	t.Logf("+0.5 ms: detected in %d of %d trials, interval covered 0.5 ms in %d, exceeds 0.2 ms in %d", detected, trials, covered, found)
	if detected != trials || covered < trials*92/100 || covered > trials*98/100 {
		t.Errorf("detected in %d, covered in %d of %d trials", detected, covered, trials)
	}
}

// holmRun: legacy and tuned; tuned's p50 and p99 both exceed legacy's by
// the same five differences, mean 0.35 ms and SD 0.108 ms, whose interval
// lies inside a 0.5 ms margin at 95% but not at 97.5%.
func holmRun() *results.Loaded {
	z := []float64{-1.265, -0.632, 0, 0.632, 1.265}
	sc := &scenario.Scenario{Name: "details-100rps-10c", Profiles: []scenario.Profile{profile}}
	l := &results.Loaded{Dir: "results/h", Run: results.Run{ID: "h", Status: results.StatusComplete, Scenario: sc,
		Targets: []loadtarget.Target{{Name: "legacy"}, {Name: "tuned"}}}}
	for i, zi := range z {
		d := 0.35 + 0.108*zi
		l.Reps = append(l.Reps, synthRep("legacy", i+1, 1, 3, 100, 0), synthRep("tuned", i+1, 1+d, 3+d, 100, 0))
	}
	return l
}

func TestHolmApplied(t *testing.T) {
	one, err := Build([]*results.Loaded{holmRun()}, Options{Margins: Margins{"p99": 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	d1 := one.Rows[1].Difference["p99"]
	if d1.Verdict.PValue <= 0.025 || d1.Verdict.PValue > 0.05 {
		t.Fatalf("the fixture's p-value is %g, want it between 0.025 and 0.05", d1.Verdict.PValue)
	}
	if d1.Verdict.Result != Within || d1.Verdict.Family != 1 || d1.Verdict.Alpha != 0.05 || d1.Confidence != 0.95 || d1.CIMS[1] >= 0.5 {
		t.Errorf("one verdict: %+v %+v", d1, d1.Verdict)
	}

	two, _ := Build([]*results.Loaded{holmRun()}, Options{Margins: Margins{"p99": 0.5, "p50": 0.5}})
	for _, m := range []string{"p50", "p99"} {
		d := two.Rows[1].Difference[m]
		if d.Verdict.Result != Inconclusive || d.Verdict.Family != 2 || d.Verdict.Alpha != 0.025 || d.Confidence != 0.975 || d.CIMS[1] < 0.5 {
			t.Errorf("%s among two verdicts: %+v %+v", m, d, d.Verdict)
		}
		if d.Verdict.RepetitionsNeeded <= 5 || d.Verdict.RepetitionsNeeded > 8 || !strings.Contains(d.Line, "inconclusive against 0.5 ms (about") {
			t.Errorf("%s: %d repetitions needed, line %q", m, d.Verdict.RepetitionsNeeded, d.Line)
		}
	}
	// A metric without a margin keeps its uncorrected 95% interval.
	if d := two.Rows[1].Difference["p90"]; d.Verdict != nil || d.Confidence != 0.95 {
		t.Errorf("p90: %+v", d)
	}
}

func TestMarginFlag(t *testing.T) {
	var m Margins
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&m, "margin", "")
	if err := fs.Parse([]string{"--margin", "p99=1ms", "--margin", "p50=200us"}); err != nil {
		t.Fatal(err)
	}
	if m["p99"] != 1 || m["p50"] != 0.2 || m.String() != "p50=0.2ms,p99=1ms" {
		t.Errorf("margins %v (%s)", m, m.String())
	}
	for _, c := range []struct{ arg, want string }{
		{"p99=abc", `invalid value "p99=abc" for flag -margin: p99: "abc" is not a duration (want a number with a unit, e.g. 1ms`},
		{"p99=1", `invalid value "p99=1" for flag -margin: p99: "1" is not a duration`},
		{"p98=1ms", `invalid value "p98=1ms" for flag -margin: unknown metric "p98" (want one of avg, p50, p75, p90, p99, p99.9)`},
		{"p99", `invalid value "p99" for flag -margin: want METRIC=DURATION, e.g. p99=1ms`},
		{"p99=0ms", `the margin must be above zero, not 0ms`},
		{"p50=1ms", `p50 given twice`},
	} {
		fs := flag.NewFlagSet("compare", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(&m, "margin", "")
		err := fs.Parse([]string{"--margin", c.arg})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--margin %s: error %v, want %q", c.arg, err, c.want)
		}
	}
	if _, err := Build([]*results.Loaded{holmRun()}, Options{Baseline: "no-mesh"}); err == nil ||
		err.Error() != "--baseline no-mesh: not a target of these runs (targets: legacy, tuned)" {
		t.Errorf("unknown baseline: %v", err)
	}
}

// TestVerdictOutputs: the verdict in every format, computed once.
func TestVerdictOutputs(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthPairedRun(7, 5, 0)}, Options{Margins: Margins{"p99": 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	line := p99Of(t, tb).Line
	var md bytes.Buffer
	if err := tb.Write(&md, "md"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Paired difference vs **no-mesh** (latency from send, ms)",
		"| profile | target | pairs | avg | p50 | p75 | p90 | p99 | p99.9 |",
		"| 100rps-10c | ambient | 5 |",
		"Verdicts against the margins (p99=0.5ms), Holm-corrected over the 1 verdicts of this table at family-wise α = 0.05:",
		"- " + line + "\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.HasSuffix(line, ", within 0.5 ms") {
		t.Errorf("line %q", line)
	}

	var js bytes.Buffer
	_ = tb.Write(&js, "json")
	var doc struct {
		MarginsMS map[string]float64 `json:"margins_ms"`
		Method    string             `json:"difference_method"`
		Rows      []struct {
			Difference map[string]struct {
				Pairs   int         `json:"pairs"`
				CI      *[2]float64 `json:"ci_ms"`
				Line    string      `json:"line"`
				Verdict *struct {
					Result string  `json:"result"`
					Margin float64 `json:"margin_ms"`
				} `json:"verdict"`
			} `json:"difference"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	d := doc.Rows[1].Difference["p99"]
	if doc.MarginsMS["p99"] != 0.5 || doc.Method == "" || doc.Rows[0].Difference != nil || d.Pairs != 5 || d.CI == nil ||
		d.Line != line || d.Verdict == nil || d.Verdict.Result != Within || d.Verdict.Margin != 0.5 || doc.Rows[1].Difference["p50"].Verdict != nil {
		t.Errorf("json: %+v", doc)
	}

	var cs bytes.Buffer
	_ = tb.Write(&cs, "csv")
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "p99_verdict")
	if col < 0 || slices.Index(recs[0], "p99_diff_lo") < 0 || slices.Index(recs[0], "pairs") < 0 {
		t.Fatalf("csv header %v", recs[0])
	}
	// Rows: no-mesh plain, corrected; ambient plain, corrected.
	if recs[3][col] != Within || recs[1][col] != "" || recs[4][col] != "" {
		t.Errorf("csv verdicts %q %q %q", recs[1][col], recs[3][col], recs[4][col])
	}

	// Without margins: differences and intervals, no verdict.
	plain, _ := Build([]*results.Loaded{synthPairedRun(7, 5, 0)}, Options{})
	d2 := p99Of(t, plain)
	if d2.Verdict != nil || d2.CIMS == nil || d2.Confidence != 0.95 || strings.Contains(d2.Line, "within") {
		t.Errorf("no margin: %+v", d2)
	}
	md.Reset()
	_ = plain.Write(&md, "md")
	if !strings.Contains(md.String(), "Paired difference vs **no-mesh**") || strings.Contains(md.String(), "Verdicts") {
		t.Errorf("markdown without margins:\n%s", md.String())
	}
}
