package bench

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	scenariosDir = "../../../scenarios"
	targetsFile  = "../../../bench/targets.yaml"
)

// repoPlan is the plan of the repository's own files, read once.
var repoPlan = sync.OnceValue(func() *Plan {
	p, err := LoadPlan(scenariosDir, targetsFile)
	if err != nil {
		panic(err)
	}
	return p
})

// TestShippedPlan: the repository's bench files load, and say what the
// suite has always run (the timing of about 13 minutes plus the soak).
func TestShippedPlan(t *testing.T) {
	p := repoPlan()
	var keys []string
	for _, e := range p.Alone {
		keys = append(keys, e.Key)
	}
	if got := strings.Join(keys, " "); got != "details ratings reviews api page" {
		t.Errorf("endpoints %q, want the leaf services first and the page last", got)
	}
	if p.Timing.Rep != 5*time.Second || p.Timing.Reps != 4 || p.Timing.LadderStep != 8*time.Second || p.Timing.Probe != 30*time.Second {
		t.Errorf("timing %+v", p.Timing)
	}
	if len(p.Ladder) != 5 || p.Ladder[4].QPS != 4000 || p.Ladder[4].Connections != 400 {
		t.Errorf("ladder %+v", p.Ladder)
	}
	if p.Soak.Duration.Std() != 30*time.Minute || p.HealthPath != "/health" {
		t.Errorf("soak %v, health path %q", p.Soak.Duration, p.HealthPath)
	}
	if r := p.Routes(); len(r) != 4 || r[3].Service != "productpage" || r[3].Rate != 500 || r[3].Upstream != 2 {
		t.Errorf("framework routes %+v", r)
	}
}

// copyPlanFiles copies the shipped bench files into a temporary directory
// and returns the directory and the targets file there.
func copyPlanFiles(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(scenariosDir, "bench-*.yaml"))
	for _, f := range append(files, targetsFile) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "targets.yaml")
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestThresholdIsOneLine: a threshold changed in targets.yaml changes the
// verdict; nothing else needs to change.
func TestThresholdIsOneLine(t *testing.T) {
	dir, targets := copyPlanFiles(t)
	edit(t, targets, "threshold: 768", "threshold: 100")
	p, err := LoadPlan(dir, targets)
	if err != nil {
		t.Fatal(err)
	}
	rss := p.Targets.T("total_rss_mb")
	if rss.Threshold != 100 || rss.Met(400) || !repoPlan().Targets.T("total_rss_mb").Met(400) {
		t.Errorf("400 MB against %v: met %v", rss.Text(), rss.Met(400))
	}
}

// TestBadPlanFiles: each mistake is reported with its file, line and field.
func TestBadPlanFiles(t *testing.T) {
	cases := []struct {
		file, old, new string
		want           []string
	}{
		{"targets.yaml", "comparison: \"<\"\n    threshold: 768", "comparison: \"=<\"\n    threshold: 768",
			[]string{"targets.yaml:", "targets.total_rss_mb.comparison: must be one of <, <=, >, >=, got \"=<\""}},
		{"targets.yaml", "threshold: 768", "threshold: lots",
			[]string{"targets.total_rss_mb.threshold: must be a number, got \"lots\""}},
		{"targets.yaml", "  total_rss_mb:", "  total_rss:",
			[]string{"targets.total_rss: unknown target", "targets.total_rss_mb: missing"}},
		{"targets.yaml", "    why: a leak at this pace is about 0.6 GB a day\n", "",
			[]string{"targets.soak_rss_slope_mb.why: missing"}},
		{"bench-ratings.yaml", "{name: 100rps-10c, qps: 100,", "{name: 100rps-10c, qps: 200,",
			[]string{"bench-ratings.yaml: profiles[0]: must equal bench-details.yaml's first profile"}},
		{"bench-ladder.yaml", "{name: 2000rps-200c, qps: 2000, connections: 200, duration: 8s}", "{name: 2000rps-200c, qps: 2000, connections: 200, duration: 9s}",
			[]string{"bench-ladder.yaml: profiles[3].duration: every rung runs as long as the first (8s), got 9s"}},
		{"bench-soak.yaml", "duration: 30m}", "duration: 30}",
			[]string{"bench-soak.yaml:", "profiles[0].duration"}},
	}
	for _, c := range cases {
		dir, targets := copyPlanFiles(t)
		edit(t, filepath.Join(dir, c.file), c.old, c.new)
		_, err := LoadPlan(dir, targets)
		if err == nil {
			t.Errorf("%s with %q: no error", c.file, c.new)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s with %q: error %q lacks %q", c.file, c.new, err, w)
			}
		}
	}
	dir, targets := copyPlanFiles(t)
	if err := os.Remove(filepath.Join(dir, "bench-maxrate.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPlan(dir, targets); err == nil || !strings.Contains(err.Error(), "bench-maxrate.yaml: missing") {
		t.Errorf("without bench-maxrate.yaml: %v", err)
	}
}
