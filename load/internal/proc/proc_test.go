package proc

import (
	"math"
	"os/exec"
	"syscall"
	"testing"
	"time"
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
		u = Group(cmd.Process.Pid)
		if u.CPU >= 0.05 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if u.Procs < 1 || u.CPU < 0.05 || u.HWMkB <= 0 || u.RSSkB <= 0 {
		t.Errorf("usage of a busy shell: %+v, want its CPU time and memory", u)
	}
	if got := Group(1 << 30); got.Procs != 0 || got.CPU != 0 {
		t.Errorf("a group that does not exist: %+v", got)
	}
}

func TestSelfAndMachineCPU(t *testing.T) {
	start := SelfCPU()
	busy0, total0 := MachineCPU()
	// Burn CPU until /proc shows it (it counts in 10 ms ticks), for at most
	// 2 s of wall time: a busy loop of that long must show.
	x := 0.0
	deadline := time.Now().Add(2 * time.Second)
	for SelfCPU()-start < 0.05 && time.Now().Before(deadline) {
		for i := 0; i < 1_000_000; i++ {
			x += math.Sqrt(float64(i))
		}
	}
	_ = x
	if d := SelfCPU() - start; d < 0.05 {
		t.Errorf("self CPU grew by %v s in a 2 s busy loop", d)
	}
	busy1, total1 := MachineCPU()
	if busy1 < busy0 || total1 <= total0 || busy1 > total1 {
		t.Errorf("machine CPU %v/%v then %v/%v", busy0, total0, busy1, total1)
	}
}
