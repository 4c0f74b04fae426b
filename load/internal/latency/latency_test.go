package latency

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"fortio.org/fortio/periodic"
	"fortio.org/fortio/stats"
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestScheduleMirrorsFortio(t *testing.T) {
	// 100 qps over 10 threads for 2 s: 20 calls per thread, the last one due at
	// the very end (fortio stretches the spacing by n/(n-1) for that).
	s := NewSchedule(100, 10, 2*time.Second)
	cases := []struct {
		iter int64
		want time.Duration
	}{
		{0, 0},
		{1, secs((1 + 1.0/19) / 10)},
		{10, secs((10 + 10.0/19) / 10)},
		{19, 2 * time.Second},
	}
	for _, c := range cases {
		if got := s.Offset(c.iter); got != c.want {
			t.Errorf("Offset(%d) = %v, want %v", c.iter, got, c.want)
		}
	}
	if s.CallsPerThread() != 20 {
		t.Errorf("calls per thread %d, want 20", s.CallsPerThread())
	}
	if NewSchedule(-1, 4, time.Second).Paced() {
		t.Error("max-speed mode must not be paced")
	}
}

// report feeds the recorder like fortio's runOne would: thread id, iteration,
// send time, latency.
func report(r *Recorder, id int, iter int64, sent time.Time, lat time.Duration, ok bool) {
	r.Report(context.Background(), periodic.ThreadID(id), iter, sent, lat.Seconds(), ok, "200")
}

func TestRecorderCorrectsForStalls(t *testing.T) {
	// One thread at 10 qps for 10 s: due every ~101 ms. Request 3 takes 1 s,
	// so requests 4..12 (due during the stall) go out late, back to back.
	sched := NewSchedule(10, 1, 10*time.Second)
	r := NewRecorder(sched, 1, 1)
	t0 := time.Unix(1000, 0)
	lat := time.Millisecond
	sent := t0
	wantCorrected := map[int64]time.Duration{}
	for i := int64(0); i < 100; i++ {
		due := t0.Add(sched.Offset(i))
		if due.After(sent) {
			sent = due
		}
		l := lat
		if i == 3 {
			l = time.Second
		}
		report(r, 0, i, sent, l, true)
		wantCorrected[i] = sent.Add(l).Sub(due)
		sent = sent.Add(l)
	}
	d := r.Result()
	if d.Plain.TotalCount() != 100 || d.Corrected.TotalCount() != 100 {
		t.Fatalf("counts %d %d", d.Plain.TotalCount(), d.Corrected.TotalCount())
	}
	var sum time.Duration
	for _, c := range wantCorrected {
		sum += c
	}
	if d.CorrectedSum != sum {
		t.Errorf("corrected sum %v, want %v", d.CorrectedSum, sum)
	}
	// Plain: 99 fast, 1 slow; corrected: the 9 requests caught behind it too.
	if p := d.Plain.ValueAtQuantile(95); p != 1000 {
		t.Errorf("plain p95 %d µs, want 1000", p)
	}
	if p := d.Corrected.ValueAtQuantile(95); p < 400_000 {
		t.Errorf("corrected p95 %d µs, want the stall to show (>= 400 ms)", p)
	}
	if got, want := countAbove(d.Corrected, 2000), int64(10); got != want {
		t.Errorf("%d corrected latencies above 2 ms, want %d (the slow one and the 9 behind it)", got, want)
	}
}

func secs(f float64) time.Duration { return time.Duration(int64(f * 1e9)) }

func countAbove(h *hdrhistogram.Histogram, us int64) int64 {
	var n int64
	for _, b := range h.Distribution() {
		if b.From > us {
			n += b.Count
		}
	}
	return n
}

func TestRecorderOnTimeEqualsPlain(t *testing.T) {
	sched := NewSchedule(100, 2, time.Second)
	r := NewRecorder(sched, 2, 2)
	t0 := time.Unix(1000, 0)
	for th := 0; th < 2; th++ {
		start := t0.Add(time.Duration(th) * 37 * time.Microsecond) // goroutine start skew
		for i := int64(0); i < sched.CallsPerThread(); i++ {
			report(r, th, i, start.Add(sched.Offset(i)).Add(20*time.Microsecond), 300*time.Microsecond, i%10 != 0)
		}
	}
	d := r.Result()
	if d.PlainSum != d.CorrectedSum {
		t.Errorf("on-time requests: corrected sum %v != plain sum %v", d.CorrectedSum, d.PlainSum)
	}
	req, errs := r.Counts()
	if req != 100 || errs != 10 {
		t.Errorf("counts %d requests %d errors, want 100 and 10", req, errs)
	}
}

// TestPrecision is why we record ourselves: for latencies bunched around 1.2 ms
// (a typical keep-alive call), fortio's default 1 ms buckets interpolate p90
// far off; the HdrHistogram is within 0.1%.
func TestPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHistogram()
	fh := stats.NewHistogram(0, 0.001)
	var xs []time.Duration
	var sum time.Duration
	for range 20000 {
		d := time.Duration(1.2e6 * math.Exp(0.15*rng.NormFloat64())) // lognormal, median 1.2 ms
		xs = append(xs, d)
		sum += d
		_ = h.RecordValue(Micros(d))
		fh.Record(d.Seconds())
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	s := Summarize(h, sum)
	fd := fh.Export().CalcPercentiles([]float64{90})
	for _, c := range []struct {
		p   float64
		got float64
	}{{50, s.P50}, {75, s.P75}, {90, s.P90}, {99, s.P99}} {
		exact := float64(xs[int(math.Ceil(c.p/100*float64(len(xs))))-1]) / 1e6
		if rel := math.Abs(c.got-exact) / exact; rel > 0.001 {
			t.Errorf("p%g = %.4f ms, exact %.4f ms (%.2f%% off)", c.p, c.got, exact, 100*rel)
		}
	}
	exact90 := float64(xs[len(xs)*9/10-1]) / 1e6
	fortio90 := fd.Percentiles[0].Value * 1000
	rel := math.Abs(fortio90-exact90) / exact90
	t.Logf("p90 exact %.3f ms, HdrHistogram %.3f ms, fortio 1 ms buckets %.3f ms (%.1f%% off)", exact90, s.P90, fortio90, 100*rel)
	if rel < 0.02 {
		t.Errorf("fortio's buckets are within 2%% here; the reason for our own histogram is gone, revisit")
	}
	if want := float64(sum) / float64(len(xs)) / 1e6; math.Abs(s.Avg-want) > 1e-9 {
		t.Errorf("avg %.6f, want exact %.6f", s.Avg, want)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := int64(1); i <= 5000; i++ {
		_ = h.RecordValue(i * 7)
	}
	s, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equals(h) {
		t.Error("decoded histogram differs")
	}
	if _, err := Decode("not base64!"); err == nil {
		t.Error("garbage decoded")
	}
}

func TestMicrosClamps(t *testing.T) {
	if Micros(-time.Second) != 0 || Micros(2*time.Hour) != HighestMicros || Micros(1499*time.Nanosecond) != 1 || Micros(1500*time.Nanosecond) != 2 {
		t.Error("Micros does not round or clamp")
	}
}
