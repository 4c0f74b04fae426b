package selfbench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"fortio.org/fortio/periodic"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
)

// BenchmarkRecorderReport is the per-request cost of recording (both
// histograms, the corrected-latency arithmetic, the counters), with as many
// goroutines as fortio would run connections. It is what recording adds to
// each request, free of the loopback noise of the max-rate benchmark.
func BenchmarkRecorderReport(b *testing.B) {
	const threads = 400
	r := latency.NewRecorder(latency.NewSchedule(4000, threads, time.Hour), threads, 8)
	var next atomic.Int64
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		id := periodic.ThreadID(next.Add(1) % threads)
		var iter int64
		for pb.Next() {
			r.Report(context.Background(), id, iter, start.Add(time.Duration(iter)*100*time.Millisecond), 0.00123, true, "200")
			iter++
		}
	})
}
