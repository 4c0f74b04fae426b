package demo

import (
	"fmt"
	"io"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/proc"
)

// busyMachine is the share of all CPUs in use above which a missed rate is
// put down to the machine: the load generator and both stacks compete for
// the same cores, and a neighbour's process takes its share first.
const busyMachine = 0.9

// cpuMeter reads, around one scenario's run, where the machine's CPU went:
// the two stacks' services, bookload itself, and everything else.
type cpuMeter struct {
	groups []int // process groups of every service of both stacks
}

// cpuSnapshot is one reading of the meter: seconds of CPU so far.
type cpuSnapshot struct {
	at           time.Time
	busy, total  float64 // the machine's, summed over its CPUs
	self, stacks float64 // bookload's; every service's of both stacks
}

// cpuUse is the CPU used between two snapshots, in CPUs (cores kept busy on
// average over the wall time).
type cpuUse struct {
	cpus      float64 // the machine's CPUs
	shareBusy float64 // of them, busy
	self      float64 // bookload
	stacks    float64 // both stacks' services
}

// others is what the rest of the machine used.
func (u cpuUse) others() float64 { return max(u.shareBusy*u.cpus-u.stacks-u.self, 0) }

// newCPUMeter finds the process group of every service of the stacks on
// these port bases.
func newCPUMeter(bases []int) (*cpuMeter, error) {
	stacks, err := local.Status(io.Discard)
	if err != nil {
		return nil, err
	}
	m := &cpuMeter{}
	for _, b := range bases {
		n := 0
		for _, s := range stacks {
			if s.PortBase != b {
				continue
			}
			for _, svc := range s.Services {
				m.groups = append(m.groups, svc.PID)
				n++
			}
		}
		if n != len(local.Services) {
			return nil, fmt.Errorf("the stack on %d lists %d services, want %d", b, n, len(local.Services))
		}
	}
	return m, nil
}

func (m *cpuMeter) read() cpuSnapshot {
	s := cpuSnapshot{at: time.Now(), self: proc.SelfCPU()}
	s.busy, s.total = proc.MachineCPU()
	for _, g := range m.groups {
		s.stacks += proc.Group(g).CPU
	}
	return s
}

// since is the use from an earlier snapshot to s.
func (s cpuSnapshot) since(before cpuSnapshot) cpuUse {
	wall := s.at.Sub(before.at).Seconds()
	if wall <= 0 || s.total <= before.total {
		return cpuUse{}
	}
	return cpuUse{
		cpus:      (s.total - before.total) / wall,
		shareBusy: (s.busy - before.busy) / (s.total - before.total),
		self:      (s.self - before.self) / wall,
		stacks:    (s.stacks - before.stacks) / wall,
	}
}

// limit says what kept a row below its offered rate, from the CPU used
// over its scenario's run and the row's own latency; "" when the row held
// its rate.
func limit(r compare.Row, conns int, u cpuUse) string {
	if r.TargetQPS <= 0 || r.QPS >= r.TargetQPS*(1-compare.QPSShortfall) {
		return ""
	}
	head := fmt.Sprintf("%s %s reached %.1f of %g RPS", r.Scenario, r.Target, r.QPS, r.TargetQPS)
	use := fmt.Sprintf("the machine's %.1f CPUs %.0f%% busy: both stacks %.2f CPUs, bookload %.2f, other processes %.2f",
		u.cpus, 100*u.shareBusy, u.stacks, u.self, u.others())
	if u.shareBusy >= busyMachine {
		return fmt.Sprintf("%s: the CPUs were taken (%s); the services waited for a core, so rerun on a quiet machine", head, use)
	}
	// fortio's connections are closed loops: each waits for its answer, so
	// conns connections carry at most conns/latency requests per second.
	if avg := r.LatencyMS["avg"]; avg > 0 && conns > 0 {
		if most := float64(conns) / (avg / 1000); most < r.TargetQPS*(1+compare.QPSShortfall) {
			return fmt.Sprintf("%s: at %.1f ms per answer, %d connections carry at most about %.0f RPS (%s)", head, avg, conns, most, use)
		}
	}
	return fmt.Sprintf("%s with CPU to spare (%s) and answers fast enough for %d connections: a pause in a service or in bookload, not a steady limit", head, use, conns)
}
