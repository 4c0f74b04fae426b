package bench

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

// TestGroupUsage: a child in its own process group that burns CPU and holds
// memory is seen with its CPU time and peak RSS.
func TestGroupUsage(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 5")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	var u Usage
	for time.Now().Before(deadline) {
		u = groupUsage(cmd.Process.Pid)
		if u.CPU >= 0.05 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if u.Procs < 1 || u.CPU < 0.05 || u.HWMkB <= 0 || u.RSSkB <= 0 {
		t.Errorf("usage of a busy shell: %+v, want its CPU time and memory", u)
	}
	if got := groupUsage(1 << 30); got.Procs != 0 || got.CPU != 0 {
		t.Errorf("a group that does not exist: %+v", got)
	}
}

func TestSelfAndMachineCPU(t *testing.T) {
	start := selfCPU()
	busy0, total0 := machineCPU()
	// Burn CPU until /proc shows it (it counts in 10 ms ticks), for at most
	// 2 s of wall time: a busy loop of that long must show.
	x := 0.0
	deadline := time.Now().Add(2 * time.Second)
	for selfCPU()-start < 0.05 && time.Now().Before(deadline) {
		for i := 0; i < 1_000_000; i++ {
			x += math.Sqrt(float64(i))
		}
	}
	_ = x
	if d := selfCPU() - start; d < 0.05 {
		t.Errorf("self CPU grew by %v s in a 2 s busy loop", d)
	}
	busy1, total1 := machineCPU()
	if busy1 < busy0 || total1 <= total0 || busy1 > total1 {
		t.Errorf("machine CPU %v/%v then %v/%v", busy0, total0, busy1, total1)
	}
}

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
