package bench

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

const planFile = "../../../bench/plan.yaml"

// repoPlan is the repository's plan, read once.
var repoPlan = sync.OnceValue(func() *Plan {
	p, err := LoadPlan(planFile)
	if err != nil {
		panic(err)
	}
	return p
})

// TestShippedPlan: the repository's plan loads, and says what the suite has
// always run (the timing of about 13 minutes plus the soak).
func TestShippedPlan(t *testing.T) {
	p := repoPlan()
	if got := strings.Join(names(p.OfKind("endpoint")), " "); got != "details ratings reviews api page" {
		t.Errorf("endpoints %q, want the leaf services first and the page last", got)
	}
	if p.Timing.Rep != 5*time.Second || p.Timing.Reps != 4 || p.Timing.LadderStep != 8*time.Second || p.Timing.Probe != 30*time.Second || p.Timing.StackWarmup != 20*time.Second {
		t.Errorf("timing %+v", p.Timing)
	}
	if l := p.first("ladder").Rungs; len(l) != 5 || l[4].QPS != 4000 || l[4].Connections != 400 {
		t.Errorf("ladder %+v", l)
	}
	if p.first("soak").Load.Duration != 30*time.Minute || p.first("framework").Path != "/health" || p.PageEndpoint().Name != "page" {
		t.Errorf("soak %v, health path %q", p.first("soak").Load.Duration, p.first("framework").Path)
	}
	if r := p.Routes(); len(r) != 4 || r[3].Service != "productpage" || r[3].Rate != 500 || r[3].Upstream != 2 {
		t.Errorf("framework routes %+v", r)
	}
	if len(p.Targets.Order) != 17 {
		t.Errorf("targets %v", p.Targets.Order)
	}
}

// TestSelect: --only runs a part with what it needs, in plan order.
func TestSelect(t *testing.T) {
	p := repoPlan()
	for only, want := range map[string]string{
		"":            strings.Join(names(p.Parts), " "),
		"floor":       "floor",
		"details":     "floor details",
		"framework":   "floor details ratings reviews page framework",
		"maxrate,api": "floor api maxrate",
		"soak":        "soak",
		"hops":        "hops",
		"timing-cost": "floor details ratings reviews page framework timing-cost",
	} {
		got, err := p.Select(only)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("Select(%q) = %v, %v; want %s", only, got, err, want)
		}
	}
	if _, err := p.Select("nope"); err == nil || !strings.Contains(err.Error(), "no such part") {
		t.Errorf("Select(nope): %v", err)
	}
}

// planWith is the shipped plan with old replaced by new, parsed.
func planWith(t *testing.T, old, new string) (*Plan, error) {
	t.Helper()
	b, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("the plan has no %q", old)
	}
	return ParsePlan(planFile, []byte(strings.Replace(string(b), old, new, 1)))
}

// TestThresholdIsOneLine: a threshold changed in the plan changes the
// verdict; nothing else needs to change.
func TestThresholdIsOneLine(t *testing.T) {
	p, err := planWith(t, "threshold: 768", "threshold: 100")
	if err != nil {
		t.Fatal(err)
	}
	rss := p.Targets.T("total_rss_mb")
	if rss.Threshold != 100 || rss.Met(400) || !repoPlan().Targets.T("total_rss_mb").Met(400) {
		t.Errorf("400 MB against %v: met %v", rss.Text(), rss.Met(400))
	}
}

// TestBadPlan: each mistake is reported with the file, line, field and value.
func TestBadPlan(t *testing.T) {
	cases := []struct {
		old, new string
		want     []string
	}{
		{"comparison: \"<\"\n    threshold: 768", "comparison: \"=<\"\n    threshold: 768",
			[]string{"bench/plan.yaml:", "targets.total_rss_mb.comparison: must be one of <, <=, >, >=, got \"=<\""}},
		{"threshold: 768", "threshold: lots", []string{"targets.total_rss_mb.threshold: must be a number, got \"lots\""}},
		{"  total_rss_mb:", "  total_rss:", []string{"targets.total_rss: unknown target", "targets.total_rss_mb: missing"}},
		{"    why: a leak at this pace is about 0.6 GB a day\n", "", []string{"targets.soak_rss_slope_mb.why: missing"}},
		{"base: {qps: 100,", "base: {qps: -100,", []string{"bench/plan.yaml:10: base.qps: must be > 0, got \"-100\""}},
		{"      - {qps: 2000, connections: 200}", "      - {qps: 2000, connections: 0}", []string{"parts[9].rungs[3].connections: must be an integer ≥ 1, got \"0\""}},
		{"load: {qps: 200, connections: 20, duration: 30m}", "load: {qps: 200, connections: 20, duration: 30}", []string{"parts[14].load.duration: must be a duration with a unit", "got \"30\""}},
		{"    kind: maxrate", "    kind: maxrates", []string{"parts[10].kind: unknown kind \"maxrates\""}},
		{"    kind: maxrate\n    load: {qps: 500, duration: 30s}", "    kind: maxrate\n    load: {qps: 500}", []string{"parts[10].load.duration: missing"}},
		{"  - name: ratings", "  - name: details", []string{"parts[2].name: part \"details\" defined twice"}},
		{"targets: [service_p50_floors, service_p999_ms]\n  - name: reviews", "targets: [page_p50]\n  - name: reviews", []string{"parts[2].targets[0]: a part of kind endpoint is not judged on \"page_p50\""}},
		{"    path: /health", "    path: /health\n    rungs: []", []string{"parts[6].rungs: unknown field"}},
	}
	for _, c := range cases {
		_, err := planWith(t, c.old, c.new)
		if err == nil {
			t.Errorf("%q: no error", c.new)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", c.new, err, w)
			}
		}
	}
}
