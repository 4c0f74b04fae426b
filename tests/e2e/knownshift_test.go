package e2e

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/tests/waterfallcheck"
)

// startDelayProxy runs `bookload delay-proxy` in front of to; stop ends it
// and returns the mean hold it reports.
func startDelayProxy(t *testing.T, to string, delay time.Duration) (url string, stop func() time.Duration) {
	t.Helper()
	cmd := exec.Command(bookload, "delay-proxy", "--listen", "127.0.0.1:0", "--to", to, "--delay", delay.String(), "--connections", "10")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	line, _ := r.ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		_ = cmd.Process.Kill()
		t.Fatalf("delay-proxy said %q", line)
	}
	stopped := false
	stop = func() time.Duration {
		if stopped {
			return 0
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		line, _ := r.ReadString('\n')
		_ = cmd.Wait()
		_, mean, _ := strings.Cut(strings.TrimSpace(line), ", mean ")
		d, err := time.ParseDuration(mean)
		if err != nil {
			t.Errorf("delay-proxy's last line %q: %v", line, err)
		}
		return d
	}
	t.Cleanup(func() { stop() })
	return url, stop
}

// The known answer on the full page, short (the bench's known-shift part
// runs it for longer): two delay proxies 0.3 ms apart in front of one tuned
// stack, interleaved and repeated until the client hop's p50 difference is
// within +-0.1 ms or 70 s are spent. The difference found, on the page and
// on that hop, is the one the proxies report (within the larger of 0.1 ms
// and twice the interval's half-width: a bias, not the interval's 5%, fails
// it), and no other part of the waterfall takes it.
func TestKnownShiftInFrontOfThePage(t *testing.T) {
	s := stackV2.need(t)
	near, stopNear := startDelayProxy(t, s.url("productpage", ""), 200*time.Microsecond)
	far, stopFar := startDelayProxy(t, s.url("productpage", ""), 500*time.Microsecond)
	dir := t.TempDir()
	sc := "name: known-shift\nservice: productpage\npath: /productpage\nwarmup: 2s\nrepetitions: 3\nkeepalive: true\nuniform: true\n" +
		"profiles:\n  - {name: 100rps-10c, qps: 100, connections: 10, duration: 3s}\n"
	scFile := filepath.Join(dir, "known-shift.yaml")
	if err := os.WriteFile(scFile, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	run := exec.Command(bookload, "run", scFile, "--out", out, "--target", "near="+near, "--target", "far="+far,
		"--until-decided", "--part-precision", "hop:client=0.1ms", "--budget", "70s")
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("bookload run: %v\n%s", err, b)
	}
	known := float64(stopFar()-stopNear()) / float64(time.Millisecond)
	runs, _ := filepath.Glob(filepath.Join(out, "*", "run.json"))
	if len(runs) != 1 {
		t.Fatalf("runs %v", runs)
	}
	b, err := exec.Command(bookload, "compare", filepath.Dir(runs[0]), "--baseline", "near", "--format", "json").Output()
	if err != nil {
		t.Fatalf("bookload compare: %v", err)
	}
	var doc struct {
		Sequential bool `json:"sequential"`
		Rows       []struct {
			Target     string `json:"target"`
			Difference map[string]struct {
				Pairs  int         `json:"pairs"`
				MeanMS float64     `json:"mean_ms"`
				CIMS   *[2]float64 `json:"ci_ms"`
				Line   string      `json:"line"`
			} `json:"difference"`
		} `json:"rows"`
		Notes []string `json:"notes"`
		waterfallcheck.Doc
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Sequential {
		t.Error("the run does not read as sequential")
	}
	t.Logf("known: %.3f ms; %s", known, strings.Join(doc.Notes, "; "))
	if known < 0.25 || known > 0.45 {
		t.Errorf("the proxies held %.3f ms apart, want about 0.3", known)
	}
	// within is the larger of 0.1 ms and twice a difference's half-width.
	within := func(ci *[2]float64) float64 {
		if ci == nil {
			return math.Inf(1)
		}
		return math.Max(0.1, ci[1]-ci[0])
	}
	found := false
	for _, r := range doc.Rows {
		d, ok := r.Difference["p50"]
		if r.Target != "far" || !ok {
			continue
		}
		found = true
		t.Logf("%s", d.Line)
		if d.CIMS == nil || d.CIMS[1]-d.CIMS[0] > 2 {
			t.Errorf("after %d pairs the p50 interval is %v: too few pairs or a machine too busy to say anything", d.Pairs, d.CIMS)
		} else if off := math.Abs(d.MeanMS - known); off > within(d.CIMS) {
			t.Errorf("p50 difference %.3f ms, %.3f ms off the known %.3f (allowed %.3f)", d.MeanMS, off, known, within(d.CIMS))
		}
	}
	if !found {
		t.Fatalf("no p50 difference for far: %s", b)
	}
	if len(doc.Waterfalls) != 1 || len(doc.Waterfalls[0].Targets) != 2 {
		t.Fatalf("waterfalls: %+v", doc.Waterfalls)
	}
	for _, sp := range doc.Waterfalls[0].Targets[1].Splits {
		if sp.Metric != "p50" {
			continue
		}
		for _, seg := range sp.Segments {
			d := seg.Difference
			if d == nil {
				t.Errorf("p50 %s: no difference", seg.Key)
				continue
			}
			want := 0.0
			if seg.Key == "hop:client" {
				want = known
			}
			if d.CIMS != nil {
				t.Logf("p50 %-26s %+.3f ms [%.3f, %.3f]", seg.Label, d.MeanMS, d.CIMS[0], d.CIMS[1])
			}
			if off := math.Abs(d.MeanMS - want); off > within(d.CIMS) {
				t.Errorf("p50 %s moved %+.3f ms, want %.3f (allowed %.3f)", seg.Label, d.MeanMS, want, within(d.CIMS))
			}
		}
	}
}
