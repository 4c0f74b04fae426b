package bench

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// The bench runs on a virtual machine whose host has other tenants: the
// load average and the "other processes" column see what runs inside this
// machine, not a neighbour slowing its CPUs down (shared caches and memory
// bandwidth, or less CPU time than the guest believes it has). The speed
// check makes that visible: a fixed single-threaded workload, timed while
// both stacks are idle at a few points of the bench. A quiet host gives the
// same time every time; when one check takes much longer than the fastest,
// the numbers measured around it are slower than the code.
//
// The check counts the CPU time of its own thread, not the wall time: a
// process of this machine running in between (a JIT compiler thread of
// reviews finishing its work) only delays it, while time the host gives to
// another tenant, and cache misses a neighbour causes, are still counted,
// since the guest cannot tell them from its own work.

// SpeedCheck is one reading of the fixed workload, in two parts: plain
// computation, which a neighbour hardly changes, and memory latency, which
// it does (on this machine the walk's time varied 2.5× within seconds while
// the computation's stayed within 5%).
type SpeedCheck struct {
	When      string  // "before the stacks start", ...
	ComputeMS float64 // CPU ms for SHA-256 of hashBytes, median over speedRounds
	MemoryNS  float64 // CPU ns per step of the dependent walk, median over speedRounds
}

const (
	speedRounds = 9
	// speedSlowdown is the ratio slowest/fastest (of either part) above
	// which the report says the host was slower during part of the bench.
	speedSlowdown = 1.15
	chaseWords    = 2 << 20 // 8 MiB of uint32: far larger than a CPU core's L2, as the services' working sets are
	chaseSteps    = 1 << 17
	hashBytes     = 4 << 20
)

var speedData struct {
	next []uint32
	buf  []byte
}

func speedSetup() {
	if speedData.next != nil {
		return
	}
	// One random cycle through every word (Sattolo's algorithm), from a
	// fixed seed: the same walk on every run and every machine.
	next := make([]uint32, chaseWords)
	for i := range next {
		next[i] = uint32(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := len(next) - 1; i > 0; i-- {
		j := r.IntN(i)
		next[i], next[j] = next[j], next[i]
	}
	speedData.next = next
	speedData.buf = make([]byte, hashBytes)
	for i := range speedData.buf {
		speedData.buf[i] = byte(i)
	}
}

// walk follows the cycle for chaseSteps dependent loads (memory latency,
// cache contention); hash is SHA-256 of hashBytes (computation, its data
// read in order). Both return a value so the compiler cannot drop them.
func walk() uint32 {
	var at uint32
	for range chaseSteps {
		at = speedData.next[at]
	}
	return at
}

func hash() uint32 {
	sum := sha256.Sum256(speedData.buf)
	return uint32(sum[0])
}

// speedSink takes the timed calls' results so that no compiler may drop them;
// it is written, never read, by design.
var speedSink uint32 //nolint:unused // a write-only sink, see above

// speedCheck times both parts speedRounds times, in CPU time of this
// thread, and returns their medians.
func speedCheck(when string) SpeedCheck {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	speedSetup()
	speedSink ^= walk() // pages the data in; not timed
	compute := make([]float64, speedRounds)
	memory := make([]float64, speedRounds)
	for i := range speedRounds {
		t0 := threadCPU()
		speedSink ^= hash()
		t1 := threadCPU()
		speedSink ^= walk()
		t2 := threadCPU()
		compute[i] = (t1 - t0) * 1e3
		memory[i] = (t2 - t1) * 1e9 / chaseSteps
	}
	return SpeedCheck{When: when, ComputeMS: stats.Median(compute), MemoryNS: stats.Median(memory)}
}

// threadCPU is the CPU time of the calling OS thread, in seconds.
func threadCPU() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

// spread is slowest/fastest of one part over the checks (1 with fewer than two).
func spread(checks []SpeedCheck, part func(SpeedCheck) float64) float64 {
	if len(checks) < 2 {
		return 1
	}
	lo, hi := part(checks[0]), part(checks[0])
	for _, c := range checks[1:] {
		lo, hi = min(lo, part(c)), max(hi, part(c))
	}
	if lo <= 0 {
		return 1
	}
	return hi / lo
}

func computeMS(c SpeedCheck) float64 { return c.ComputeMS }
func memoryNS(c SpeedCheck) float64  { return c.MemoryNS }

// speedText lists the checks for the report's header.
func speedText(checks []SpeedCheck) string {
	parts := make([]string, len(checks))
	for i, c := range checks {
		parts[i] = fmt.Sprintf("%s: %s ms, %.0f ns", c.When, ms(c.ComputeMS), c.MemoryNS)
	}
	return strings.Join(parts, "; ")
}

// slowerText says which part of the check varied beyond speedSlowdown, or "".
func slowerText(checks []SpeedCheck) string {
	var parts []string
	if s := spread(checks, computeMS); s > speedSlowdown {
		parts = append(parts, fmt.Sprintf("computation up to %.0f%% slower than at its fastest", (s-1)*100))
	}
	if s := spread(checks, memoryNS); s > speedSlowdown {
		parts = append(parts, fmt.Sprintf("memory latency up to %.0f%% higher than at its lowest", (s-1)*100))
	}
	return strings.Join(parts, ", ")
}
