package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

func TestWriteFileAtomicReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second"} {
		if err := WriteFileAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("content %q, want %q", b, content)
		}
	}
	assertNoTemp(t, dir)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestWriteFileAtomicFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	// The destination is a non-empty directory: the rename must fail, and
	// nothing of the attempt may remain.
	target := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(target, []byte("data")); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		t.Errorf("the existing entry was damaged: %v", err)
	}
	assertNoTemp(t, dir)
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x")); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// TestWriteFileAtomicReaders: a reader racing the writer sees one whole
// version or the other, never a mix or a prefix.
func TestWriteFileAtomicReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	a, b := bytes.Repeat([]byte("a"), 256<<10), bytes.Repeat([]byte("b"), 300<<10)
	if err := WriteFileAtomic(path, a); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 40; i++ {
			if err := WriteFileAtomic(path, [][]byte{a, b}[i%2]); err != nil {
				t.Error(err)
				return
			}
		}
		close(stop)
	}()
	reads := 0
	for done := false; !done; reads++ {
		select {
		case <-stop:
			done = true
		default:
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("read %d bytes that are neither version", len(got))
		}
	}
	wg.Wait()
}

func testRun() Run {
	s := &scenario.Scenario{Name: "smoke", Service: "details", Path: "/details/0", Repetitions: 2,
		Profiles: []scenario.Profile{{Name: "p", QPS: 10, Connections: 1, Duration: scenario.Duration(time.Second)}}}
	return Run{Scenario: s, Targets: []loadtarget.Target{{Name: "a", URL: "http://127.0.0.1:1"}}, Repetitions: 2}
}

func testRep(t *testing.T, run Run, rep int) *Rep {
	h := latency.NewHistogram()
	_ = h.RecordValue(1500)
	req := engine.Request{Scenario: run.Scenario, Profile: run.Scenario.Profiles[0], Target: run.Targets[0], Repetition: rep}
	res := &engine.Result{Engine: "fake", Requests: 1, Codes: map[string]int64{"200": 1}, ActualQPS: 10, RequestedQPS: 10,
		Latency: latency.Distributions{Plain: h, Corrected: h, PlainSum: 1500 * time.Microsecond, CorrectedSum: 1500 * time.Microsecond}}
	r, err := NewRep(req, res, CurrentTool(), CurrentMachine())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readRun(t *testing.T, dir string) Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStoreLifecycle(t *testing.T) {
	out := t.TempDir()
	now := func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }
	run := testRun()
	st, err := Create(out, run, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(out, "2026-11-22T10-00-00Z_smoke"); st.Dir() != want {
		t.Errorf("dir %s, want %s", st.Dir(), want)
	}
	if r := readRun(t, st.Dir()); r.Status != StatusPartial || len(r.Done) != 0 {
		t.Errorf("at start: status %q done %d, want partial and none", r.Status, len(r.Done))
	}
	native := json.RawMessage(`{"RunType":"HTTP","ActualQPS":10}`)
	path, err := st.Add(testRep(t, run, 1), native)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(st.Dir(), "a", "p", "rep-01.json"); path != want {
		t.Errorf("rep path %s, want %s", path, want)
	}
	// The repetition file is fortio's document with our object added.
	var doc map[string]json.RawMessage
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc["RunType"]) != `"HTTP"` || doc["bookload"] == nil {
		t.Errorf("rep file lacks fortio's fields or ours: %s", b)
	}
	if r := readRun(t, st.Dir()); r.Status != StatusPartial || len(r.Done) != 1 {
		t.Errorf("after one rep: status %q done %d", r.Status, len(r.Done))
	}
	if _, err := st.Add(testRep(t, run, 2), nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	l, err := Open(st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Status != StatusComplete || len(l.Reps) != 2 || l.Reps[1].Repetition != 2 {
		t.Errorf("loaded %+v", l.Run)
	}
	if got := l.Reps[0].Latency.Plain.SummaryMS.P50; got != 1.5 {
		t.Errorf("p50 %v ms, want 1.5", got)
	}
	h, err := latency.Decode(l.Reps[0].Latency.Corrected.HdrHistogram)
	if err != nil || h.TotalCount() != 1 {
		t.Errorf("stored histogram: %v, %v", h, err)
	}
	assertNoTemp(t, st.Dir())

	// A second run in the same second gets its own directory.
	st2, err := Create(out, run, now)
	if err != nil || st2.Dir() == st.Dir() {
		t.Errorf("second run dir %s (%v)", st2.Dir(), err)
	}
	runs, err := FindRuns([]string{out})
	if err != nil || len(runs) != 2 {
		t.Errorf("FindRuns: %v %v", runs, err)
	}
	if _, err := FindRuns([]string{t.TempDir()}); err == nil {
		t.Error("an empty directory is not a run")
	}
}
