package report

import (
	"bytes"
	"image/png"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// fakeRun writes a run directory as `bookload run` would, with synthetic
// latencies: each target's requests around base ms (scaled by the profile's
// rate for a ladder), a tail at 10×, corrected latency a bit higher.
func fakeRun(t *testing.T, out string, s *scenario.Scenario, engineName string, bases map[string]float64, reps int, seed uint64) string {
	t.Helper()
	var targets []loadtarget.Target
	engines := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(bases)) {
		targets = append(targets, loadtarget.Target{Name: name, URL: "http://127.0.0.1:9081", Knobs: map[string]string{"HTTP_NODELAY": "1"}})
		engines[name] = engineName
	}
	now := time.Date(2026, 11, 22, 10, 0, int(seed), 0, time.UTC)
	store, err := results.Create(out, results.Run{
		Scenario: s, Targets: targets, Engines: engines, Repetitions: reps,
		Labels: map[string]string{"engine": engineName}, Tool: results.CurrentTool(), Machine: results.CurrentMachine(),
	}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for pi, p := range s.Profiles {
		for r := 1; r <= reps; r++ {
			for _, tg := range targets {
				base := bases[tg.Name] * (1 + 0.3*float64(pi))
				d := latency.Distributions{Plain: latency.NewHistogram(), Corrected: latency.NewHistogram()}
				h := hops.NewResult()
				n := int(p.QPS * p.Duration.Std().Seconds())
				for i := 0; i < n; i++ {
					v := base * (0.7 + 0.6*rng.Float64())
					if rng.IntN(100) == 0 {
						v *= 10
					}
					us := time.Duration(v * float64(time.Millisecond))
					c := us + time.Duration(rng.IntN(300))*time.Microsecond
					_ = d.Plain.RecordValue(latency.Micros(us))
					_ = d.Corrected.RecordValue(latency.Micros(c))
					d.PlainSum += us
					d.CorrectedSum += c
					if s.Service == "productpage" { // answers with the whole call tree
						part := func(f float64) time.Duration { return time.Duration(f * float64(us)) }
						h.Add([]hops.Metric{{Name: "app", Dur: part(0.8)}, {Name: "details", Dur: part(0.2)}, {Name: "details.app", Dur: part(0.15)},
							{Name: "reviews", Dur: part(0.6)}, {Name: "reviews.app", Dur: part(0.5)},
							{Name: "reviews.ratings", Dur: part(0.2)}, {Name: "reviews.ratings.app", Dur: part(0.1)}}, us, c)
					}
				}
				res := &engine.Result{Engine: engineName, Start: now, Duration: p.Duration.Std(), RequestedQPS: p.QPS,
					ActualQPS: p.QPS * (0.99 + 0.01*rng.Float64()), Requests: int64(n), Codes: map[string]int64{"200": int64(n)}, Latency: d, Hops: h}
				if engineName == "k6" {
					res.Metadata = map[string]any{"k6_version": "v1.8.1", "corrected_latency": "plain + scheduling delay (test)", "dropped_iterations": 0}
				}
				rep, err := results.NewRep(engine.Request{Scenario: s, Profile: p, Target: tg, Repetition: r, Labels: map[string]string{"engine": engineName}},
					res, results.CurrentTool(), results.CurrentMachine())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := store.Add(rep, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := store.Finish(results.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	return store.Dir()
}

func prof(name string, qps float64, conns int) scenario.Profile {
	return scenario.Profile{Name: name, QPS: qps, Connections: conns, Duration: scenario.Duration(2 * time.Second)}
}

var (
	detailsScenario = &scenario.Scenario{Name: "demo-details", Description: "details, <tuned> & legacy", Service: "details", Path: "/details/0",
		Repetitions: 5, Timeout: scenario.Duration(3 * time.Second), KeepAlive: true, Warmup: scenario.Duration(time.Second),
		Headers:  []scenario.Header{{Name: "X-Test", Value: "1"}},
		Profiles: []scenario.Profile{prof("100rps-10c", 100, 10)}}
	ladderScenario = &scenario.Scenario{Name: "bookinfo-ladder", Service: "productpage", Path: "/productpage",
		Repetitions: 4, Timeout: scenario.Duration(3 * time.Second), KeepAlive: true,
		Profiles: []scenario.Profile{prof("100rps-10c", 100, 10), prof("500rps-50c", 500, 50), prof("1000rps-100c", 1000, 100)}}
)

// fixture writes a fortio run and a k6 run of the same details scenario
// (tuned vs legacy) and a fortio ladder run; it returns the results directory.
func fixture(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	fakeRun(t, out, detailsScenario, "fortio", map[string]float64{"legacy": 1.2, "tuned": 0.6}, 5, 1)
	fakeRun(t, out, detailsScenario, "k6", map[string]float64{"legacy": 1.3, "tuned": 0.7}, 5, 2)
	fakeRun(t, out, ladderScenario, "fortio", map[string]float64{"legacy": 6, "tuned": 4}, 4, 3)
	return out
}

func buildReport(t *testing.T, dirs ...string) *Report {
	t.Helper()
	runs, err := results.OpenAll(dirs)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(runs, Options{Baseline: "legacy"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReportContent: the page has a percentile and a summary chart per
// profile, a ladder chart for the ladder only, fortio and k6 side by side,
// the comparison tables and the run metadata, and refers to nothing outside.
func TestReportContent(t *testing.T) {
	r := buildReport(t, fixture(t))
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	kinds := map[string]int{}
	for _, m := range regexp.MustCompile(`<svg role="img"[^>]*data-kind="([a-z]+)"`).FindAllStringSubmatch(page, -1) {
		kinds[m[1]]++
	}
	// details: 1 profile; ladder: 3 profiles + 1 ladder chart, and the
	// productpage answers carry Server-Timing: a waterfall per profile.
	if kinds["percentiles"] != 4 || kinds["summary"] != 4 || kinds["ladder"] != 1 || kinds["waterfall"] != 3 {
		t.Errorf("charts %v, want 4 percentiles, 4 summary, 1 ladder, 3 waterfall", kinds)
	}
	for _, want := range []string{
		"legacy@fortio", "tuned@k6", // the same targets on two engines, side by side
		"Δ tuned@k6", "(baseline)", "~ (p=", // comparison tables
		"corrected for coordinated omission",
		"details, &lt;tuned&gt; &amp; legacy",            // escaped
		"X-Test: 1", "keep-alive true", "HTTP_NODELAY=1", // knobs
		"k6 v1.8.1", "scheduling delay (test)", // engine versions and notes
		"GOMAXPROCS", "2026-11-22T10:00:0", // machine, dates
		"gonum.org/v1/plot",
		// the waterfall: its split said plainly, its parts, its differences
		"bookinfo-ladder 100rps-10c: where the time goes", "not sums of percentiles",
		"client → productpage", "reviews → ratings", "∥ productpage → details", "<th>total</th>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Self-contained: no script, no link, no fetch of anything.
	for _, re := range []string{`<script`, `<link`, `<img`, `<iframe`, `src=`, `href=`, `url\(`, `@import`} {
		if regexp.MustCompile(re).MatchString(page) {
			t.Errorf("page contains %s", re)
		}
	}
	// The charts' text is drawn with a font every browser has as fallback.
	if !strings.Contains(page, "font-family:Liberation Sans,Arial,Helvetica,sans-serif;") {
		t.Error("SVG text has no font fallback")
	}
}

// TestPNGs: --png writes every chart as a decodable PNG of the chart size.
func TestPNGs(t *testing.T) {
	r := buildReport(t, fixture(t))
	dir := filepath.Join(t.TempDir(), "png")
	paths, err := r.WritePNGs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 12 {
		t.Fatalf("%d PNGs, want 12: %v", len(paths), paths)
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if b := img.Bounds(); b.Dx() != 1080 || b.Dy() < 604 || b.Dy() > 605 {
			t.Errorf("%s: %v, want 1080×604 (7.5×4.2 in at 144 dpi)", p, b)
		}
	}
	if filepath.Base(paths[0]) != "demo-details_100rps-10c_percentiles.png" || !strings.HasSuffix(paths[len(paths)-1], "bookinfo-ladder_ladder.png") {
		t.Errorf("names %v", paths)
	}
}

// TestErrors: no runs, or a broken histogram, is an error that names it.
func TestErrors(t *testing.T) {
	if _, err := results.OpenAll([]string{t.TempDir()}); err == nil {
		t.Error("an empty directory is not a run")
	}
	out := t.TempDir()
	dir := fakeRun(t, out, detailsScenario, "fortio", map[string]float64{"tuned": 1}, 1, 4)
	path := filepath.Join(dir, "tuned", "100rps-10c", "rep-01.json")
	data, _ := os.ReadFile(path)
	data = regexp.MustCompile(`"hdr_histogram_us": "[^"]*"`).ReplaceAll(data, []byte(`"hdr_histogram_us": "bm90IGEgaGlzdG9ncmFt"`))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := results.OpenAll([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(runs, Options{}); err == nil || !strings.Contains(err.Error(), "demo-details 100rps-10c tuned") {
		t.Errorf("err %v", err)
	}
}

// TestReportVerdicts: with margins the page leads with the verdict lines
// and shows the paired differences, coloured by verdict; without, neither
// the section nor a verdict.
func TestReportVerdicts(t *testing.T) {
	dir := fakeRun(t, t.TempDir(), detailsScenario, "fortio", map[string]float64{"legacy": 1.2, "tuned": 0.6}, 5, 1)
	runs, err := results.OpenAll([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(runs, Options{Baseline: "legacy", Margins: compare.Margins{"p50": 0.1, "p99": 50}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	p50 := r.Table.Rows[1].Difference["p50"]
	for _, want := range []string{
		`<section id="verdicts">`,
		`<li class="verdict-faster">` + p50.Line + `</li>`,
		"tuned vs legacy, demo-details 100rps-10c: p50 -0.",
		"faster by more than 0.1 ms",
		", within 50 ms</li>",
		"demo-details: paired difference vs legacy",
		`<td class="verdict-faster" title="97.50% interval of the mean of 5 paired differences`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if i, j := strings.Index(page, `id="verdicts"`), strings.Index(page, `id="comparison"`); i < 0 || i > j {
		t.Error("the verdicts do not come before the comparison")
	}
	plain := buildReport(t, dir)
	b.Reset()
	_ = plain.WriteHTML(&b)
	if strings.Contains(b.String(), `id="verdicts"`) || strings.Contains(b.String(), `class="verdict-`) || !strings.Contains(b.String(), "paired difference vs legacy") {
		t.Error("a report without margins shows verdicts, or no differences")
	}
}
