package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/k6engine"
)

const oneSecond = `name: onesec
service: details
path: /details/0
repetitions: 1
profiles:
  - {name: 50rps-2c, qps: 50, connections: 2, duration: 1s}
`

// TestFortioAndK6ThenReport: the same target run by fortio and by k6
// (`--engine k6 --label engine=k6`), then `bookload report` over both runs:
// the two engines side by side in the tables, one HTML file, PNGs.
func TestFortioAndK6ThenReport(t *testing.T) {
	if _, err := k6engine.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("SKIP: the real k6 is not built (%v)", err)
	}
	dir := t.TempDir()
	srv := okServer(t)
	sc := writeScenario(t, dir, oneSecond)
	out := filepath.Join(dir, "results")
	for _, engine := range []string{"fortio", "k6"} {
		stdout, code := capture(t, func() int {
			return runCmd([]string{sc, "--engine", engine, "--target", "tuned=" + srv.URL, "--out", out, "--label", "engine=" + engine})
		})
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", engine, code, stdout)
		}
	}
	html := filepath.Join(dir, "report.html")
	pngs := filepath.Join(dir, "charts")
	stdout, code := capture(t, func() int { return reportCmd([]string{out, "-o", html, "--png", pngs}) })
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stdout)
	}
	if !strings.Contains(stdout, "report: "+html) || !strings.Contains(stdout, "charts: 2 PNG files") {
		t.Errorf("stdout %q", stdout)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tuned@fortio (baseline)", "Δ tuned@k6", "k6 v1.8.1"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	stdout, code = capture(t, func() int { return compareCmd([]string{out}) })
	if code != 0 || !strings.Contains(stdout, "tuned@k6") {
		t.Errorf("compare: exit %d\n%s", code, stdout)
	}
}

func TestEngineFlag(t *testing.T) {
	dir := t.TempDir()
	srv := okServer(t)
	sc := writeScenario(t, dir, tiny)
	if _, code := capture(t, func() int { return runCmd([]string{sc, "--engine", "wrk", "--target", "a=" + srv.URL}) }); code != 2 {
		t.Errorf("unknown engine: exit %d, want 2", code)
	}
	// k6 cannot run a 300 ms profile: said before any run directory is made.
	t.Setenv("BOOKLOAD_K6", "/bin/true")
	out := filepath.Join(dir, "results")
	if _, code := capture(t, func() int {
		return runCmd([]string{sc, "--engine", "k6", "--target", "a=" + srv.URL, "--out", out})
	}); code != 1 {
		t.Errorf("k6 with a 300 ms profile: exit %d, want 1", code)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a run directory was made: %v", err)
	}
}

func TestReportUsage(t *testing.T) {
	if _, code := capture(t, func() int { return reportCmd(nil) }); code != 2 {
		t.Errorf("no DIR: exit %d, want 2", code)
	}
	if _, code := capture(t, func() int { return reportCmd([]string{t.TempDir()}) }); code != 1 {
		t.Errorf("not a run: exit %d, want 1", code)
	}
}
