package hops

import (
	"math"
	"reflect"
	"testing"
	"time"
)

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

func TestFromResponse(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nserver-timing: app;dur=4.5, details;desc=\"x\";dur=1.25\r\n" +
		"Server-Timing: reviews.ratings;dur=\"2\", nodur;desc=y, bad;dur=-1\r\n\r\nServer-Timing: body;dur=9")
	got := FromResponse(nil, raw)
	want := []Metric{{"app", ms(4.5)}, {"details", ms(1.25)}, {"reviews.ratings", ms(2)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromResponse = %v, want %v", got, want)
	}
	if got := FromResponse(nil, []byte("HTTP/1.1 200 OK\r\n\r\n")); len(got) != 0 {
		t.Errorf("no header: %v", got)
	}
}

// The split at a percentile is what the requests at that percentile spent,
// not the sum of each part's own percentile: half the requests spend 9 ms
// in the app and 1 ms on the wire, half the other way round, all 10 ms end
// to end. Each part's p99 is 9 ms (18 ms "in all"); the split of p99 adds
// up to the 10 ms the requests took.
func TestSplitIsOfTheRequestsAtThePercentile(t *testing.T) {
	r := NewResult()
	for i := 0; i < 100; i++ {
		app, wire := 9.0, 1.0
		if i%2 == 1 {
			app, wire = 1, 9
		}
		r.Add([]Metric{{"app", ms(app)}}, ms(app+wire), ms(app+wire))
	}
	// And 100 fast requests, so that p50 and p99 fall apart.
	for i := 0; i < 100; i++ {
		r.Add([]Metric{{"app", ms(0.5)}}, ms(1), ms(1))
	}
	if p99 := float64(r.Metrics["app"].ValueAtPercentile(99)+r.Residuals[ClientHop].ValueAtPercentile(99)) / 1000; math.Abs(p99-18) > 0.1 {
		t.Fatalf("sum of the parts' p99 %.2f ms, want 18 (the point of this test)", p99)
	}
	s := r.ByLatency.SplitAt(99)
	if total := s.MS["app"] + s.MS[ResidualColumn+ClientHop]; math.Abs(total-10) > 0.01 || s.Requests != 100 {
		t.Errorf("p99 split %v: parts add to %.3f ms over %d requests, want 10 over 100", s, total, s.Requests)
	}
	if math.Abs(s.LatencyMS-10) > 0.1 {
		t.Errorf("p99 bucket at %.3f ms, want 10", s.LatencyMS)
	}
	if s := r.ByLatency.SplitAt(50); math.Abs(s.MS["app"]-0.5) > 0.001 {
		t.Errorf("p50 split %v: want the fast requests' 0.5 ms app", s)
	}
}

func TestResidualsPerHop(t *testing.T) {
	r := NewResult()
	r.Add([]Metric{{"app", ms(5)}, {"reviews", ms(4)}, {"reviews.app", ms(3)}, {"reviews.ratings", ms(2)}, {"reviews.ratings.app", ms(0.5)}}, ms(6), ms(8))
	r.Add(nil, ms(1), ms(1))
	for hop, want := range map[string]int64{ClientHop: 1000, "reviews": 1000, "reviews.ratings": 1500} {
		if got := r.Residuals[hop].Max(); got < want-2 || got > want+2 {
			t.Errorf("residual %s = %d µs, want %d", hop, got, want)
		}
	}
	if _, ok := r.Residuals["reviews.app"]; ok {
		t.Error("a server time has no residual")
	}
	if got := r.ClientCorrected.Max(); got < 2997 || got > 3003 { // 3 significant digits
		t.Errorf("corrected client residual %d µs, want 3000", got)
	}
	if r.Requests != 1 || r.Without != 1 {
		t.Errorf("requests %d, without %d", r.Requests, r.Without)
	}
}

func TestDocRoundTripAndMerge(t *testing.T) {
	a, b := NewResult(), NewResult()
	a.Add([]Metric{{"app", ms(1)}, {"details", ms(0.5)}}, ms(2), ms(2))
	b.Add([]Metric{{"app", ms(3)}}, ms(4), ms(4))
	doc, err := a.Doc()
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.ByLatency.SplitAt(50), a.ByLatency.SplitAt(50)) {
		t.Errorf("round trip changed the split: %v vs %v", back.ByLatency.SplitAt(50), a.ByLatency.SplitAt(50))
	}
	back.Merge(b)
	if back.Requests != 2 || back.Metrics["app"].TotalCount() != 2 || back.ByLatency.Requests() != 2 {
		t.Errorf("merged: %d requests, %d app values", back.Requests, back.Metrics["app"].TotalCount())
	}
	if s := back.ByLatency.SplitAt(100); math.Abs(s.MS["app"]-3) > 0.001 || s.MS["details"] != 0 {
		t.Errorf("p100 after merge %v: want b's request (app 3 ms, no details)", s)
	}
}

func TestNamesAreBounded(t *testing.T) {
	r := NewResult()
	for i := 0; i < 3*MaxNames; i++ {
		r.Add([]Metric{{string(rune('a'+i%26)) + string(rune('a'+i/26)), ms(1)}}, ms(2), ms(2))
	}
	if len(r.Metrics)+len(r.Residuals) > 2*MaxNames || r.Dropped == 0 {
		t.Errorf("%d histograms, %d dropped", len(r.Metrics)+len(r.Residuals), r.Dropped)
	}
}

// The stack follows the critical path and its parts add up to the latency
// the client measured; the call beside it is a parallel branch starting
// where its sibling starts.
func TestStackAlongTheCriticalPath(t *testing.T) {
	r := NewResult()
	tree := []Metric{{"app", ms(10)}, {"details", ms(2)}, {"details.app", ms(1.5)}, {"reviews", ms(8)},
		{"reviews.app", ms(7)}, {"reviews.ratings", ms(4)}, {"reviews.ratings.app", ms(1)}}
	r.Add(tree, ms(11), ms(11))
	s := r.ByLatency.SplitAt(50)
	path := CriticalPath(s)
	if !reflect.DeepEqual(path, []string{"reviews", "reviews.ratings"}) {
		t.Fatalf("critical path %v", path)
	}
	segs := Stack(s, "productpage", path)
	want := []struct {
		key, label string
		ms, start  float64
		parallel   bool
	}{
		{"hop:client", "client → productpage", 1, 0, false},
		{"server:app", "productpage", 2, 1, false},
		{"hop:reviews", "productpage → reviews", 1, 3, false},
		{"server:reviews", "reviews", 3, 4, false},
		{"hop:reviews.ratings", "reviews → ratings", 3, 7, false},
		{"server:reviews.ratings", "ratings", 1, 10, false},
		{"hop:details", "productpage → details", 0.5, 3, true},
		{"server:details", "details", 1.5, 3.5, true},
	}
	if len(segs) != len(want) {
		t.Fatalf("segments %+v", segs)
	}
	for i, w := range want {
		g := segs[i]
		if g.Key != w.key || g.Label != w.label || math.Abs(g.MS-w.ms) > 0.002 || math.Abs(g.StartMS-w.start) > 0.005 || g.Parallel != w.parallel {
			t.Errorf("segment %d = %+v, want %+v", i, g, w)
		}
	}
	if total := StackTotal(segs); math.Abs(total-11) > 0.005 {
		t.Errorf("stack adds up to %.3f ms, the client measured 11", total)
	}
	// A path that names a call this split lacks stops the stack at the
	// root: its calls are then parallel branches beside its whole time.
	if segs := Stack(s, "productpage", []string{"nowhere"}); len(segs) != 6 || math.Abs(segs[1].MS-10) > 0.002 || !segs[2].Parallel {
		t.Errorf("stack without a call on the path: %+v", segs)
	}
}
