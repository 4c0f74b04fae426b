package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// fakeEngine records the order of calls and returns canned results; onRun may
// change a call's outcome.
type fakeEngine struct {
	mu       sync.Mutex
	calls    []string
	checkErr error
	onRun    func(ctx context.Context, n int, req engine.Request) (*engine.Result, error)
}

func (f *fakeEngine) Name() string { return "fake" }

func (f *fakeEngine) Check(context.Context, engine.Request) error { return f.checkErr }

func (f *fakeEngine) Run(ctx context.Context, req engine.Request, live func(engine.Live)) (*engine.Result, error) {
	f.mu.Lock()
	name := fmt.Sprintf("%s/%s/%d", req.Target.Name, req.Profile.Name, req.Repetition)
	if req.Repetition == 0 {
		name = fmt.Sprintf("%s/%s/warmup(%v)", req.Target.Name, req.Profile.Name, req.Profile.Duration)
	}
	f.calls = append(f.calls, name)
	n := len(f.calls)
	f.mu.Unlock()
	if live != nil {
		live(engine.Live{Elapsed: time.Millisecond, Requests: 1})
	}
	if f.onRun != nil {
		if res, err := f.onRun(ctx, n, req); res != nil || err != nil {
			return res, err
		}
	}
	h := latency.NewHistogram()
	_ = h.RecordValue(1000)
	return &engine.Result{Engine: "fake", Requests: 1, Codes: map[string]int64{"200": 1},
		RequestedQPS: req.Profile.QPS, ActualQPS: req.Profile.QPS,
		Latency: latency.Distributions{Plain: h, Corrected: h}}, nil
}

func testScenario(warmup time.Duration) *scenario.Scenario {
	return &scenario.Scenario{
		Name: "order", Service: "details", Path: "/", Repetitions: 3, Warmup: scenario.Duration(warmup),
		Profiles: []scenario.Profile{
			{Name: "low", QPS: 10, Connections: 1, Duration: scenario.Duration(time.Second)},
			{Name: "high", QPS: 20, Connections: 2, Duration: scenario.Duration(time.Second)},
		},
	}
}

func targets(names ...string) []loadtarget.Target {
	var ts []loadtarget.Target
	for _, n := range names {
		ts = append(ts, loadtarget.Target{Name: n, URL: "http://127.0.0.1:1"})
	}
	return ts
}

func config(t *testing.T, f *fakeEngine, s *scenario.Scenario, ts []loadtarget.Target) Config {
	return Config{
		Scenario: s, Targets: ts, Out: t.TempDir(),
		EngineFor: func(loadtarget.Target) (engine.Engine, error) { return f, nil },
	}
}

func TestInterleavingOrder(t *testing.T) {
	f := &fakeEngine{}
	cfg := config(t, f, testScenario(time.Second), targets("A", "B", "C"))
	cfg.Repetitions = 3
	out, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"A/low/warmup(1s)", "B/low/warmup(1s)", "C/low/warmup(1s)",
		"A/low/1", "B/low/1", "C/low/1",
		"B/low/2", "C/low/2", "A/low/2",
		"C/low/3", "A/low/3", "B/low/3",
		"A/high/warmup(1s)", "B/high/warmup(1s)", "C/high/warmup(1s)",
		"A/high/1", "B/high/1", "C/high/1",
		"B/high/2", "C/high/2", "A/high/2",
		"C/high/3", "A/high/3", "B/high/3",
	}
	if strings.Join(f.calls, " ") != strings.Join(want, " ") {
		t.Errorf("order:\n got %v\nwant %v", f.calls, want)
	}
	if out.Run.Status != results.StatusComplete || len(out.Run.Done) != 18 || len(out.Run.Plan) != 18 {
		t.Errorf("status %s, %d done of %d planned", out.Run.Status, len(out.Run.Done), len(out.Run.Plan))
	}
	// Two targets alternate A B, B A, A B: each leads equally often.
	if got := Plan(testScenario(0).Profiles[:1], targets("A", "B"), 4, false); stepNames(got) != "A1 B1 B2 A2 A3 B3 B4 A4" {
		t.Errorf("two targets: %s", stepNames(got))
	}
}

func stepNames(steps []Step) string {
	var s []string
	for _, st := range steps {
		s = append(s, fmt.Sprintf("%s%d", st.Target.Name, st.Repetition))
	}
	return strings.Join(s, " ")
}

func readRun(t *testing.T, dir string) *results.Loaded {
	t.Helper()
	l, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestInterruptKeepsFinished: Ctrl-C during the third repetition keeps the
// two finished ones, drops the third, and marks the run partial.
func TestInterruptKeepsFinished(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeEngine{onRun: func(ctx context.Context, n int, req engine.Request) (*engine.Result, error) {
		if n == 3 {
			cancel()
			<-ctx.Done()
			return &engine.Result{Engine: "fake", Interrupted: true}, nil
		}
		return nil, nil
	}}
	out, err := Run(ctx, config(t, f, testScenario(0), targets("A", "B")))
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	l := readRun(t, out.Dir)
	if l.Run.Status != results.StatusPartial || !strings.Contains(l.Run.Note, "interrupted during B low rep 2") {
		t.Errorf("status %q note %q", l.Run.Status, l.Run.Note)
	}
	if len(l.Reps) != 2 {
		t.Errorf("%d repetitions kept, want 2", len(l.Reps))
	}
	if _, err := os.Stat(filepath.Join(out.Dir, "B", "low", "rep-02.json")); !os.IsNotExist(err) {
		t.Errorf("the interrupted repetition was saved: %v", err)
	}
	if len(f.calls) != 3 {
		t.Errorf("ran %d steps after the interrupt, want none: %v", len(f.calls)-3, f.calls)
	}
}

func TestEngineErrorMarksPartial(t *testing.T) {
	f := &fakeEngine{onRun: func(_ context.Context, n int, _ engine.Request) (*engine.Result, error) {
		if n == 2 {
			return nil, errors.New("boom")
		}
		return nil, nil
	}}
	out, err := Run(context.Background(), config(t, f, testScenario(0), targets("A", "B")))
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err %v", err)
	}
	l := readRun(t, out.Dir)
	if l.Run.Status != results.StatusPartial || len(l.Reps) != 1 || !strings.Contains(l.Run.Note, "failed at B low rep 1") {
		t.Errorf("status %q, %d reps, note %q", l.Run.Status, len(l.Reps), l.Run.Note)
	}
}

func TestCheckFailsBeforeAnyFile(t *testing.T) {
	f := &fakeEngine{checkErr: errors.New("target A does not answer")}
	cfg := config(t, f, testScenario(0), targets("A"))
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Fatal("no error")
	}
	if entries, _ := os.ReadDir(cfg.Out); len(entries) != 0 {
		t.Errorf("a run directory was made for a target that does not answer")
	}
}

func TestProgressLine(t *testing.T) {
	var b strings.Builder
	f := &fakeEngine{}
	cfg := config(t, f, testScenario(0), targets("A"))
	cfg.Repetitions = 1
	cfg.Progress = &b
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "[1/2] A low rep 1/1") {
		t.Errorf("progress output %q", b.String())
	}
}

func TestProgressLineRemote(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b}
	st := Step{Target: loadtarget.Target{Name: "ambient"}, Profile: testScenario(0).Profiles[0], Repetition: 2}
	p.show(3, 8, st, 4, engine.Live{Elapsed: time.Second, Requests: -1, Errors: -1})
	if got := b.String(); !strings.Contains(got, "[3/8] ambient low rep 2/4") || !strings.Contains(got, "counts at the end") || strings.Contains(got, "qps") {
		t.Errorf("progress output for a remote engine %q", got)
	}
}
