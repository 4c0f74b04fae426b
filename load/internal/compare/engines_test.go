package compare

import (
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// engineRun is synthRun with every repetition and target marked as driven by
// engine, and k6's dropped iterations in the metadata.
func engineRun(id, engine string, dropped int64) *results.Loaded {
	l := synthRun(4, 100, 0)
	l.Dir, l.Run.ID = "results/"+id, id
	l.Run.Engines = map[string]string{"legacy": engine, "tuned": engine}
	for i := range l.Reps {
		l.Reps[i].Engine = engine
		if dropped > 0 {
			l.Reps[i].EngineMetadata = map[string]any{"dropped_iterations": float64(dropped)} // as read back from JSON
		}
	}
	return l
}

// TestSplitByEngine: the same target names driven by fortio in one run and by
// k6 in another give separate rows, NAME@ENGINE, not one pooled median.
func TestSplitByEngine(t *testing.T) {
	fortio, k6 := engineRun("a", "fortio", 0), engineRun("b", "k6", 0)
	tb, err := Build([]*results.Loaded{fortio, k6}, Options{Baseline: "legacy"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range tb.Rows {
		names = append(names, r.Target)
		if r.N != 4 || len(tb.Reps(r)) != 4 {
			t.Errorf("%s: n %d, want 4 (not pooled)", r.Target, r.N)
		}
	}
	if got := strings.Join(names, " "); got != "legacy@fortio tuned@fortio legacy@k6 tuned@k6" {
		t.Errorf("rows %s", got)
	}
	if tb.Baseline != "legacy@fortio" {
		t.Errorf("baseline %s", tb.Baseline)
	}
	// The inputs are not changed.
	if fortio.Reps[0].Target != "legacy" || fortio.Run.Targets[0].Name != "legacy" {
		t.Error("Build renamed the caller's runs")
	}
	// One engine only: names as they are.
	tb, err = Build([]*results.Loaded{engineRun("c", "k6", 0)}, Options{})
	if err != nil || tb.Rows[0].Target != "legacy" {
		t.Fatalf("rows %+v err %v", tb.Rows, err)
	}
}

func TestDroppedIterationsWarned(t *testing.T) {
	tb, err := Build([]*results.Loaded{engineRun("d", "k6", 30)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Warnings) != 2 || !strings.Contains(tb.Warnings[0], "k6 dropped 120 iterations") || !strings.Contains(tb.Warnings[0], "in 4 of 4 repetitions") {
		t.Errorf("warnings %q", tb.Warnings)
	}
}
