package runner

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// fakeClock advances by each step's duration when the fake engine runs it.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func sequentialConfig(t *testing.T, f *fakeEngine, clock *fakeClock, budget time.Duration, until Until) Config {
	f.onRun = func(_ context.Context, _ int, req engine.Request) (*engine.Result, error) {
		clock.add(req.Profile.Duration.Std())
		return nil, nil
	}
	cfg := config(t, f, testScenario(time.Second), targets("A", "B"))
	cfg.Now, cfg.Until, cfg.Budget = clock.now, until, budget
	cfg.Sequential = &results.Sequential{Baseline: "A", MarginsMS: map[string]float64{"p50": 0.1}, BudgetSeconds: budget.Seconds()}
	return cfg
}

// Rounds go on until the verdicts are decided, each profile on its own; the
// run says after how many and why.
func TestSequentialStopsWhenDecided(t *testing.T) {
	f, clock := &fakeEngine{}, &fakeClock{t: time.Unix(0, 0)}
	var asked []string
	until := func(dir, profile string) (bool, []string, error) {
		l, err := results.Open(dir)
		if err != nil {
			return false, nil, err
		}
		n := 0
		for _, r := range l.Reps {
			if r.Profile.Name == profile {
				n++
			}
		}
		asked = append(asked, profile)
		// low decides after 3 rounds (6 repetitions), high after 2.
		if profile == "low" {
			return n >= 6, []string{"B p50 open"}, nil
		}
		return n >= 4, nil, nil
	}
	out, err := Run(context.Background(), sequentialConfig(t, f, clock, time.Hour, until))
	if err != nil {
		t.Fatal(err)
	}
	want := "A/low/warmup(1s) B/low/warmup(1s) A/low/1 B/low/1 B/low/2 A/low/2 A/low/3 B/low/3 " +
		"A/high/warmup(1s) B/high/warmup(1s) A/high/1 B/high/1 B/high/2 A/high/2"
	if got := strings.Join(f.calls, " "); got != want {
		t.Errorf("calls:\n got %s\nwant %s", got, want)
	}
	if strings.Join(asked, " ") != "low low low high high" {
		t.Errorf("asked after each round: %v", asked)
	}
	l := readRun(t, out.Dir)
	if l.Run.Status != results.StatusComplete || l.Run.Sequential == nil {
		t.Fatalf("status %s, sequential %+v", l.Run.Status, l.Run.Sequential)
	}
	if got := l.Run.Sequential.Stopped["low"]; !strings.HasPrefix(got, "decided after 3 repetitions") || strings.Contains(got, "open") {
		t.Errorf("low stopped: %q", got)
	}
	if got := l.Run.Sequential.Stopped["high"]; !strings.HasPrefix(got, "decided after 2 repetitions") {
		t.Errorf("high stopped: %q", got)
	}
}

// Never decided: a round starts only while it fits the profile's share of
// the budget, and the note says what stayed open.
func TestSequentialBudget(t *testing.T) {
	f, clock := &fakeEngine{}, &fakeClock{t: time.Unix(0, 0)}
	never := func(string, string) (bool, []string, error) { return false, []string{"B vs A p50 open"}, nil }
	// Two profiles, 20 s: 10 s each; warmup 2 s, then rounds of 2 s: 4 rounds.
	out, err := Run(context.Background(), sequentialConfig(t, f, clock, 20*time.Second, never))
	if err != nil {
		t.Fatal(err)
	}
	l := readRun(t, out.Dir)
	count := map[string]int{}
	for _, r := range l.Reps {
		count[r.Profile.Name]++
	}
	if count["low"] != 8 || count["high"] != 8 {
		t.Errorf("repetitions per profile %v, want 8 each (4 rounds of 2 targets)", count)
	}
	got := l.Run.Sequential.Stopped["low"]
	if !strings.HasPrefix(got, "budget spent after 4 repetitions, 10s of its 10s budget share") || !strings.Contains(got, "still open: B vs A p50 open") {
		t.Errorf("low stopped: %q", got)
	}
	if l.Run.Status != results.StatusComplete {
		t.Errorf("status %s", l.Run.Status)
	}
}

// The cap (--repetitions) ends a profile that is never decided.
func TestSequentialCap(t *testing.T) {
	f, clock := &fakeEngine{}, &fakeClock{t: time.Unix(0, 0)}
	never := func(string, string) (bool, []string, error) { return false, nil, nil }
	cfg := sequentialConfig(t, f, clock, time.Hour, never)
	cfg.Repetitions = 2
	out, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := readRun(t, out.Dir).Run.Sequential.Stopped["high"]; !strings.HasPrefix(got, "the cap reached after 2 repetitions") {
		t.Errorf("high stopped: %q", got)
	}
}
