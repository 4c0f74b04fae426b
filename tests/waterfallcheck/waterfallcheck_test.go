package waterfallcheck

import (
	"strings"
	"testing"
	"time"
)

func seg(key string, mean float64, ci *[2]float64) Segment {
	s := Segment{Key: key, Label: key}
	s.Difference = &struct {
		Pairs  int         `json:"pairs"`
		MeanMS float64     `json:"mean_ms"`
		CIMS   *[2]float64 `json:"ci_ms"`
		Line   string      `json:"line"`
	}{Pairs: 4, MeanMS: mean, CIMS: ci}
	return s
}

func TestDelayOnHop(t *testing.T) {
	const hop = "hop:reviews.ratings"
	nolog := func(string, ...any) {}
	for _, c := range []struct {
		name  string
		segs  []Segment
		fails string
	}{
		{"on its hop", []Segment{seg(hop, 19.6, nil), seg("app:productpage", 0.3, nil)}, ""},
		{"short of it", []Segment{seg(hop, 18.0, nil)}, "hop:reviews.ratings: +18.000 ms, want 20"},
		{"on another hop", []Segment{seg(hop, 20, nil), seg("hop:reviews", 6, nil)}, "hop:reviews: +6.000 ms, want 0"},
		{"thin bucket, no difference found", []Segment{seg(hop, 20, nil), seg("hop:reviews", 2, &[2]float64{-1, 5})}, ""},
		{"thin bucket reaching the delay", []Segment{seg(hop, 20, nil), seg("hop:reviews", 2, &[2]float64{-1, 19.5})}, "hop:reviews"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(DelayOnHop([]Split{{Metric: "p50", Segments: c.segs}}, hop, 20*time.Millisecond, nolog), "; ")
			if (c.fails == "") != (got == "") || !strings.Contains(got, c.fails) {
				t.Errorf("failures %q, want %q", got, c.fails)
			}
		})
	}
	// p99 is reported, not judged.
	if f := DelayOnHop([]Split{{Metric: "p99", Segments: []Segment{seg(hop, 3, nil)}}}, hop, 20*time.Millisecond, nolog); len(f) != 0 {
		t.Errorf("p99 judged: %v", f)
	}
}
