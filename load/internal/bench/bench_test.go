package bench

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

func TestGridAndConnections(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{{740, 750}, {1010, 1000}, {1375, 1400}} {
		if g := grid(c.in); g != c.want {
			t.Errorf("grid(%v) = %v, want %v", c.in, g, c.want)
		}
	}
	if conns(1000) != 100 || conns(4) != 1 {
		t.Errorf("connections: %d for 1000 RPS, %d for 4", conns(1000), conns(4))
	}
}

func row(qps float64, errors int64, p99 float64) *compare.Row {
	return &compare.Row{QPS: qps, Errors: errors, LatencyMS: map[string]float64{"p50": p99 / 4, "p99": p99}}
}

func TestProbeCriterion(t *testing.T) {
	cases := []struct {
		p    Probe
		want bool
	}{
		{Probe{Rate: 1000, Row: row(995, 0, 30)}, true},
		{Probe{Rate: 1000, Row: row(950, 0, 30)}, false},  // not held
		{Probe{Rate: 1000, Row: row(1000, 1, 30)}, false}, // an error
		{Probe{Rate: 1000, Row: row(1000, 0, 50)}, false}, // p99 not under 50 ms
		{Probe{Rate: 1000}, false},                        // no row
	}
	for i, c := range cases {
		if c.p.OK(repoPlan().Targets) != c.want {
			t.Errorf("case %d: OK = %v, want %v", i, !c.want, c.want)
		}
	}
	o := &Outcome{Plan: repoPlan(), MaxRate: []Probe{cases[0].p, {Rate: 1500, Row: row(1200, 0, 300)}, {Rate: 1250, Row: row(1249, 0, 20)}}}
	if best, fail := o.MaxSustained(); best != 1250 || fail != 1500 {
		t.Errorf("max sustained %v, lowest failing %v; want 1250 and 1500", best, fail)
	}
}

// TestWriteIncomplete: an interrupted bench still writes a readable file.
func TestWriteIncomplete(t *testing.T) {
	o := &Outcome{Plan: repoPlan(), Started: time.Now(), Finished: time.Now(), Timing: QuickTiming,
		Stacks: []local.Config{{PortBase: 20080, Profile: "tuned"}, {PortBase: 20180, Profile: "legacy"}},
		Notes:  []string{"INCOMPLETE: interrupted"}}
	var b bytes.Buffer
	if err := Write(&b, o, Config{Command: "bookload bench", Out: "results/bench-x", Quick: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"# Benchmarks", "bookload bench", "## Targets", "INCOMPLETE: interrupted", "QUICK RUN"} {
		if !strings.Contains(out, want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
}

func TestFreeBases(t *testing.T) {
	if os.Getenv("BOOKINFO_STATE_DIR") != "" {
		t.Skip("custom state dir")
	}
	if _, _, err := freeBases(9080, 9082); err == nil {
		t.Error("overlapping bases accepted")
	}
	tb, lb, err := freeBases(0, 0)
	if err != nil {
		t.Skip(err)
	}
	if tb == lb || tb < 20080 || lb < 20080 {
		t.Errorf("picked %d and %d", tb, lb)
	}
}

// The cluster section of an earlier BENCHMARKS.md is found with its markers;
// none, or one without its end, gives nothing.
func TestClusterSection(t *testing.T) {
	sec := ClusterBegin + "\n\n## Cluster\n\n| a |\n" + ClusterEnd + "\n"
	if got := ClusterSection([]byte("# Benchmarks\n\ntext\n\n" + sec + "after\n")); got != sec {
		t.Errorf("ClusterSection = %q, want %q", got, sec)
	}
	if got := ClusterSection([]byte("# Benchmarks\n")); got != "" {
		t.Errorf("no section: got %q", got)
	}
	if got := ClusterSection([]byte(ClusterBegin + "\nhalf")); got != "" {
		t.Errorf("unterminated section: got %q", got)
	}
}
