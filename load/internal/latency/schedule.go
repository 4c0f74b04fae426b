package latency

import "time"

// Schedule is when fortio's periodic runner means to send each request of one
// thread (connection). fortio computes it in periodic.runOne but does not
// expose it; this mirrors that arithmetic, for fortio's duration mode without
// Exactly:
//
//	calls per thread  n = int64(QPS × Duration) / Threads
//	target of iter i    = start + (i + i/(n-1)) / (QPS/Threads)   seconds
//
// where start is the runner's start, which is also when each thread sends its
// iteration 0 (no sleep before it). The recorder takes the thread's own
// iteration-0 send time as its start, so goroutine start-up skew of a few
// microseconds is not counted as latency. QPS <= 0 (fortio's max-speed mode)
// has no schedule: corrected latency equals plain latency.
type Schedule struct {
	perThreadQPS float64
	callsPerThrd int64
}

// NewSchedule returns the schedule of a fortio run at qps over threads
// connections for duration. Scenario validation guarantees at least 2 calls
// per thread, so fortio does not lower the thread count behind our back.
func NewSchedule(qps float64, threads int, duration time.Duration) Schedule {
	if qps <= 0 || threads < 1 {
		return Schedule{}
	}
	n := int64(qps*duration.Seconds()) / int64(threads)
	return Schedule{perThreadQPS: qps / float64(threads), callsPerThrd: n}
}

// Paced reports whether requests follow a schedule (QPS mode).
func (s Schedule) Paced() bool { return s.perThreadQPS > 0 }

// CallsPerThread is fortio's per-thread request count (0 when not paced).
func (s Schedule) CallsPerThread() int64 { return s.callsPerThrd }

// Offset returns when iteration iter of a thread is due, from the thread's start.
func (s Schedule) Offset(iter int64) time.Duration {
	if !s.Paced() || iter <= 0 {
		return 0
	}
	i := float64(iter)
	sec := i / s.perThreadQPS
	if s.callsPerThrd > 1 {
		sec = (i + i/float64(s.callsPerThrd-1)) / s.perThreadQPS
	}
	return time.Duration(int64(sec * 1e9))
}
