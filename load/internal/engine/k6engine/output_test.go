package k6engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
)

// line writes one k6 JSON sample.
func line(metric string, at time.Time, value float64, status string) string {
	tags := `{"scenario":"bookload"}`
	if status != "" {
		tags = fmt.Sprintf(`{"scenario":"bookload","status":%q}`, status)
	}
	return fmt.Sprintf(`{"metric":%q,"type":"Point","data":{"time":%q,"value":%g,"tags":%s}}`,
		metric, at.Format(time.RFC3339Nano), value, tags)
}

// TestScheduleReconstruction: ticks every 10 ms from t0; each request goes
// out at its tick plus a known delay, some ticks are dropped. The delays come
// back as corrected − plain, and the plain latency is blocked + duration.
func TestScheduleReconstruction(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	period := 10 * time.Millisecond
	delays := map[int]time.Duration{0: 50 * time.Microsecond, 1: 50 * time.Microsecond, 2: 3 * time.Millisecond, 5: 50 * time.Microsecond, 6: 8 * time.Millisecond, 7: 50 * time.Microsecond}
	dropped := []int{3, 4}
	var lines []string
	lines = append(lines, `{"type":"Metric","data":{"name":"http_reqs","type":"counter"},"metric":"http_reqs"}`)
	for i := 0; i < 8; i++ {
		d, ok := delays[i]
		if !ok {
			continue
		}
		start := t0.Add(time.Duration(i)*period + d)
		blocked, dur := 20*time.Microsecond, 2*time.Millisecond
		end := start.Add(blocked + dur)
		status := "200"
		if i == 5 {
			status = "0"
		}
		lines = append(lines,
			line("http_reqs", end, 1, status),
			line("http_req_duration", end, float64(dur)/1e6, status),
			line("http_req_blocked", end, float64(blocked)/1e6, status),
			line("http_req_connecting", end, 0, status),
			line("iteration_duration", end, 2.1, ""))
	}
	for _, i := range dropped {
		lines = append(lines, line("dropped_iterations", t0.Add(time.Duration(i)*period), 1, ""))
	}
	var o Output
	for _, l := range lines {
		if err := o.Feed([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	s, err := o.Summarize(period)
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 6 || s.Dropped != 2 || s.Ticks != 8 || s.Errors != 1 || s.Codes["-1"] != 1 || s.Codes["200"] != 5 {
		t.Fatalf("summary %+v", s)
	}
	// The drops are on time, so the grid starts at t0 exactly.
	if !s.ScheduleStart.Equal(t0) {
		t.Errorf("schedule start %v, want %v", s.ScheduleStart, t0)
	}
	p := latency.Summarize(s.Latency.Plain, s.Latency.PlainSum)
	c := latency.Summarize(s.Latency.Corrected, s.Latency.CorrectedSum)
	if p.Min != 2.02 || p.Max != 2.02 {
		t.Errorf("plain %+v, want 2.02 ms each (blocked + duration)", p)
	}
	// (Histogram values are exact to 3 significant digits.)
	if c.Max < 10.02 || c.Max > 10.03 || c.Min != 2.07 {
		t.Errorf("corrected min %v max %v, want 2.07 (50 µs late) and 10.02 (8 ms late)", c.Min, c.Max)
	}
	if got := s.Delay.Max(); got < 8000 || got > 8008 {
		t.Errorf("max delay %d µs, want 8000", got)
	}
	if want := 2*time.Millisecond + 20*time.Microsecond; s.Latency.PlainSum != 6*want {
		t.Errorf("plain sum %v", s.Latency.PlainSum)
	}
}

// TestFeedSkipsOtherMetrics: lines of metrics bookload does not read are only
// checked to be JSON objects, not decoded.
func TestFeedSkipsOtherMetrics(t *testing.T) {
	var o Output
	for _, l := range []string{
		`{"metric":"data_received","type":"Point","data":{"time":"x","value":"not checked"}}`,
		``,
		`{"type":"Metric","data":{"name":"http_req_duration","type":"trend"},"metric":"http_req_duration"}`,
	} {
		if err := o.Feed([]byte(l)); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	err := o.Feed([]byte(`[1,2]`))
	if err == nil || !strings.Contains(err.Error(), "line 4 is not a JSON object") {
		t.Fatalf("err %v", err)
	}
}
