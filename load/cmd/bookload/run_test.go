package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// capture runs f with os.Stdout redirected and returns what it printed.
func capture(t *testing.T, f func() int) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	code := f()
	os.Stdout = old
	w.Close()
	return <-done, code
}

func writeScenario(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const tiny = `name: tiny
service: details
path: /details/0
repetitions: 2
profiles:
  - {name: 100rps-2c, qps: 100, connections: 2, duration: 300ms}
`

func okServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":0}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRunThenCompare drives the CLI end to end against two loopback servers.
func TestRunThenCompare(t *testing.T) {
	dir := t.TempDir()
	a, b := okServer(t), okServer(t)
	sc := writeScenario(t, dir, tiny)
	out := filepath.Join(dir, "results")
	stdout, code := capture(t, func() int {
		return runCmd([]string{sc, "--target", "legacy=" + a.URL, "--target", "tuned=" + b.URL, "--out", out, "--label", "who=test"})
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	runs, err := results.FindRuns([]string{out})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	if !strings.Contains(stdout, "results: "+runs[0]+" (complete, 4 of 4 repetitions)") ||
		!strings.Contains(stdout, "| 100rps-2c | legacy (baseline) | 2 |") || !strings.Contains(stdout, "| | Δ tuned |") {
		t.Errorf("run summary:\n%s", stdout)
	}
	for _, f := range []string{"run.json", "legacy/100rps-2c/rep-01.json", "tuned/100rps-2c/rep-02.json"} {
		if _, err := os.Stat(filepath.Join(runs[0], f)); err != nil {
			t.Error(err)
		}
	}
	// Each repetition file is also fortio's result document.
	var fortio fhttp.HTTPRunnerResults
	b1, _ := os.ReadFile(filepath.Join(runs[0], "legacy/100rps-2c/rep-01.json"))
	if err := json.Unmarshal(b1, &fortio); err != nil || fortio.RunType != "HTTP" || fortio.DurationHistogram.Count < 20 || fortio.RetCodes[200] != fortio.DurationHistogram.Count {
		t.Errorf("rep file as fortio result: %v, %+v", err, fortio.RunnerResults)
	}
	l, err := results.Open(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Labels["who"] != "test" || l.Reps[0].Labels["who"] != "test" || l.Run.Machine.CPUs == 0 || l.Run.Tool.Go == "" {
		t.Errorf("metadata not recorded: %+v", l.Run)
	}

	stdout, code = capture(t, func() int { return compareCmd([]string{out, "--format", "json", "--baseline", "tuned"}) })
	if code != 0 {
		t.Fatalf("compare exit %d", code)
	}
	var doc struct {
		Baseline string `json:"baseline"`
		Rows     []struct {
			Target string `json:"target"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Baseline != "tuned" || len(doc.Rows) != 2 || doc.Rows[0].Target != "tuned" {
		t.Errorf("compare json %v: %s", err, stdout)
	}
	if _, code := capture(t, func() int { return compareCmd([]string{filepath.Join(dir, "nope")}) }); code != 1 {
		t.Errorf("compare of a missing dir: exit %d, want 1", code)
	}
}

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeScenario(t, dir, strings.Replace(tiny, "qps: 100", "qps: -5", 1))
	cases := []struct {
		args []string
		code int
	}{
		{[]string{}, 2},
		{[]string{"a", "b"}, 2},
		{[]string{"--target", "nourl", "x"}, 2},
		{[]string{bad}, 1},
		{[]string{"no-such-scenario", "--scenarios", dir}, 1},
		// Nothing listens there: fails at the check, before any load.
		{[]string{filepath.Join(dir, "tiny.yaml"), "--target", "down=http://127.0.0.1:1", "--out", dir}, 1},
	}
	for _, c := range cases {
		if _, code := capture(t, func() int { return runCmd(c.args) }); code != c.code {
			t.Errorf("run %v: exit %d, want %d", c.args, code, c.code)
		}
	}
}

// TestRunInterrupt sends this process SIGINT once the first repetition is on
// disk: the run stops, keeps it, says partial and exits 130.
func TestRunInterrupt(t *testing.T) {
	dir := t.TempDir()
	srv := okServer(t)
	sc := writeScenario(t, dir, strings.Replace(strings.Replace(tiny, "repetitions: 2", "repetitions: 20", 1), "300ms", "500ms", 1))
	out := filepath.Join(dir, "results")
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if files, _ := filepath.Glob(filepath.Join(out, "*", "local", "*", "rep-01.json")); len(files) > 0 {
				_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	stdout, code := capture(t, func() int { return runCmd([]string{sc, "--target", "local=" + srv.URL, "--out", out}) })
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stdout)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v to stop", el)
	}
	runs, _ := results.FindRuns([]string{out})
	l, err := results.Open(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Status != results.StatusPartial || len(l.Reps) < 1 || len(l.Reps) > 2 || !strings.Contains(l.Run.Note, "interrupted") {
		t.Errorf("status %s, %d reps, note %q", l.Run.Status, len(l.Reps), l.Run.Note)
	}
	if !strings.Contains(stdout, "(partial,") {
		t.Errorf("summary does not say partial:\n%s", stdout)
	}
}
