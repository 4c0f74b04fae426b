package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// A known answer: a server that sleeps 2 ms before answering, against one
// that does not, is judged "exceeds 0.5 ms" by --until-decided well before
// its budget, and the run says how many rounds that took.
func TestRunUntilDecided(t *testing.T) {
	dir := t.TempDir()
	fast := okServer(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		_, _ = w.Write([]byte(`{"id":0}`))
	}))
	t.Cleanup(slow.Close)
	sc := writeScenario(t, dir, strings.Replace(tiny, "300ms", "200ms", 1))
	out := filepath.Join(dir, "results")
	stdout, code := capture(t, func() int {
		return runCmd([]string{sc, "--target", "plain=" + fast.URL, "--target", "slow=" + slow.URL, "--out", out,
			"--margin", "p50=0.5ms", "--until-decided", "--budget", "60s"})
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if !strings.Contains(stdout, "exceeds 0.5 ms") || !strings.Contains(stdout, "confidence sequence") {
		t.Errorf("summary:\n%s", stdout)
	}
	runs, _ := results.FindRuns([]string{out})
	l, err := results.Open(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	stopped := l.Run.Sequential.Stopped["100rps-2c"]
	if l.Run.Status != results.StatusComplete || !strings.HasPrefix(stopped, "decided after ") || len(l.Reps) >= 2*runnerCapForTest {
		t.Errorf("status %s, %d repetitions, stopped %q", l.Run.Status, len(l.Reps), stopped)
	}
	t.Logf("%s", stopped)
}

const runnerCapForTest = 200

func TestRunUntilDecidedUsage(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenario(t, dir, tiny)
	a, b := okServer(t), okServer(t)
	for _, args := range [][]string{
		{sc, "--target", "a=" + a.URL, "--target", "b=" + b.URL, "--until-decided"},                                           // no margin
		{sc, "--target", "a=" + a.URL, "--until-decided", "--margin", "p50=1ms"},                                              // one target
		{sc, "--target", "a=" + a.URL, "--target", "b=" + b.URL, "--until-decided", "--margin", "p50=1ms", "--budget", "0s"},  // no budget
		{sc, "--target", "a=" + a.URL, "--target", "b=" + b.URL, "--budget", "1m"},                                            // budget alone
		{sc, "--target", "a=" + a.URL, "--target", "b=" + b.URL, "--until-decided", "--margin", "p50=1ms", "--decide", "p99"}, // p99 has no margin
		{sc, "--target", "a=" + a.URL, "--target", "b=" + b.URL, "--until-decided", "--part-precision", "client=0.1ms"},       // not a part key
	} {
		if _, code := capture(t, func() int { return runCmd(append(args, "--out", dir)) }); code != 2 {
			t.Errorf("run %v: exit %d, want 2", args[1:], code)
		}
	}
}
