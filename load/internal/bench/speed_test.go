package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

// TestSpeedCheckDoesTheWork: the walk's table is one cycle through every
// word (so a walk never gets stuck in a short loop that fits a cache), and
// a check returns positive readings.
func TestSpeedCheckDoesTheWork(t *testing.T) {
	speedSetup()
	next := speedData.next
	seen := make([]bool, len(next))
	var at uint32
	for i := range next {
		if seen[at] {
			t.Fatalf("the walk came back to %d after %d of %d steps: not one cycle", at, i, len(next))
		}
		seen[at] = true
		at = next[at]
	}
	if at != 0 {
		t.Fatalf("after %d steps the walk is at %d, not back at 0", len(next), at)
	}
	c := speedCheck("now")
	if c.When != "now" || c.ComputeMS <= 0 || c.MemoryNS <= 0 {
		t.Fatalf("speedCheck = %+v", c)
	}
}

func TestSpeedSpread(t *testing.T) {
	for _, c := range []struct {
		checks []SpeedCheck
		want   float64
	}{
		{nil, 1},
		{[]SpeedCheck{{"a", 10, 0}}, 1},
		{[]SpeedCheck{{"a", 10, 0}, {"b", 12, 0}, {"c", 11, 0}}, 1.2},
		{[]SpeedCheck{{"a", 0, 0}, {"b", 12, 0}}, 1},
	} {
		if got := spread(c.checks, computeMS); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("spread(%v) = %v, want %v", c.checks, got, c.want)
		}
	}
}

func report(o *Outcome) string {
	o.Plan, o.Started, o.Finished, o.Timing = repoPlan(), time.Now(), time.Now(), QuickTiming
	o.Stacks = []local.Config{{PortBase: 20080, Profile: "tuned"}, {PortBase: 20180, Profile: "legacy"}}
	var b bytes.Buffer
	if err := Write(&b, o, Config{Command: "bookload bench", Out: "results/bench-x"}); err != nil {
		panic(err)
	}
	return b.String()
}

// TestHeaderWarnings: a slower speed check and CPU used by other processes
// are called out; the bench's own load at the end is not.
func TestHeaderWarnings(t *testing.T) {
	quiet := report(&Outcome{LoadStart: "0.10 0.20 0.30", LoadEnd: "2.50 1.90 1.40",
		Speed: []SpeedCheck{{"at the start", 4.0, 90}, {"at the end", 4.2, 95}}})
	for _, unwanted := range []string{"machine was busy", "host was slower"} {
		if strings.Contains(quiet, unwanted) {
			t.Errorf("a quiet run's report says %q", unwanted)
		}
	}
	if !strings.Contains(quiet, "at the start: 4.00 ms, 90 ns; at the end: 4.20 ms, 95 ns") {
		t.Errorf("the speed checks are not listed:\n%s", quiet[:min(len(quiet), 2000)])
	}

	slow := report(&Outcome{LoadStart: "0.10 0.20 0.30",
		Speed: []SpeedCheck{{"at the start", 4.0, 90}, {"before the ladder", 4.1, 225}}})
	if !strings.Contains(slow, "(speed check below: memory latency up to 150% higher than at its lowest)") {
		t.Errorf("a 2.5× memory latency is not called out:\n%s", slow[:min(len(slow), 2000)])
	}
	slow = report(&Outcome{Speed: []SpeedCheck{{"a", 4.0, 90}, {"b", 5.2, 90}}})
	if !strings.Contains(slow, "(speed check below: computation up to 30% slower than at its fastest)") {
		t.Errorf("a 30%% slower computation is not called out:\n%s", slow[:min(len(slow), 2000)])
	}

	// 10 s measured, the machine busy 9 s: services 5, bookload 1, echo 0.5, other 2.5.
	m := &Measure{Wall: 10, Busy: 9, Self: 1, Server: 0.5,
		CPU: map[string]map[string]float64{"tuned": {"details": 3, "productpage": 2}}}
	if got := m.other(); got < 2.5-1e-9 || got > 2.5+1e-9 {
		t.Errorf("other() = %v, want 2.5", got)
	}
	busy := report(&Outcome{LoadStart: "3.00 0.20 0.30", Floor: map[bool]*Measure{true: m}})
	if !strings.Contains(busy, "(load average 3.0 at the start on") {
		t.Errorf("a load average of 3 at the start is not called out")
	}
	if strings.Contains(busy, "other processes used") {
		t.Errorf("other processes at 0.25 CPUs (the threshold) are called out")
	}
	m.Busy = 10
	busier := report(&Outcome{LoadStart: "0.10 0.20 0.30", Floor: map[bool]*Measure{true: m}})
	if !strings.Contains(busier, "other processes used 0.35 CPUs on average while measuring") {
		t.Errorf("other processes at 0.35 CPUs are not called out:\n%s", busier[:min(len(busier), 2000)])
	}
}
