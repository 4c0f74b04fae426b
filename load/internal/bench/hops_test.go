package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
)

func TestHopLabel(t *testing.T) {
	for name, want := range map[string]string{
		"client": "client → productpage", "details": "productpage → details",
		"reviews": "productpage → reviews", "reviews.ratings": "reviews → ratings",
	} {
		if got := HopLabel(name); got != want {
			t.Errorf("HopLabel(%q) = %q, want %q", name, got, want)
		}
	}
}

// pageHops is 100 answers that say: app 3 ms, details waited 1.0
// (details.app 0.6), reviews waited 2.0 (reviews.app 1.2, its ratings wait
// 0.5 with ratings.app 0.3), seen by the client in 3.4 ms: residuals client
// 0.4, details 0.4, reviews 0.8, reviews.ratings 0.2.
func pageHops() *hops.Result {
	m := func(name string, v float64) hops.Metric {
		return hops.Metric{Name: name, Dur: time.Duration(v * float64(time.Millisecond))}
	}
	res := hops.NewResult()
	for range 100 {
		res.Add([]hops.Metric{m("app", 3), m("details", 1), m("details.app", 0.6), m("reviews", 2), m("reviews.app", 1.2),
			m("reviews.ratings", 0.5), m("reviews.ratings.app", 0.3)}, 3400*time.Microsecond, 3400*time.Microsecond)
	}
	return res
}

// hopsOutcome has one round per floor: the two-process floor's p50 and
// the in-process one's at half of it.
func hopsOutcome(res *hops.Result, floors ...float64) *Outcome {
	p := repoPlan()
	h := &HopsMeasure{Load: p.Part("hops").Load, Res: res}
	for _, f := range floors {
		h.Floor = append(h.Floor, latency("echo", f, 1))
		h.InProcess = append(h.InProcess, latency("echo", f/2, 1))
	}
	return &Outcome{Plan: p, Ran: []string{"hops"}, Hops: h}
}

// The two-process floor rounds' median p50 is 0.25 ms: the residuals are
// 1.6, 1.6, 3.2 and 0.8 floors, and reviews alone misses the plan's 2×;
// against the in-process floor (0.125 ms) they would be twice as many.
func TestJudgeHopsAgainstTheFloor(t *testing.T) {
	o := hopsOutcome(pageHops(), 0.2, 0.25, 0.3)
	vs := Judge(o)
	want := []struct {
		label string
		p50   string
		met   bool
	}{{"client → productpage", "0.400", true}, {"productpage → details", "0.400", true}, {"productpage → reviews", "0.800", false}, {"reviews → ratings", "0.200", true}}
	if len(vs) != len(want) {
		t.Fatalf("verdicts: %+v", vs)
	}
	for i, w := range want {
		v := vs[i]
		if v.Part != "hops" || !strings.HasPrefix(v.Subject, w.label+": residual p50 ≤ 2×") || !v.Known || v.Met != w.met ||
			!strings.HasPrefix(v.Measured, "p50 "+w.p50+" ms") || !strings.Contains(v.Measured, "100 requests) vs floor 0.250 ms") ||
			!strings.Contains(v.Measured, "(in-process floor 0.125 ms") {
			t.Errorf("verdict %d: %+v, want %s p50 %s met %v", i, v, w.label, w.p50, w.met)
		}
		if over := v.Analysis != "-"; over == w.met {
			t.Errorf("%s: analysis %q", w.label, v.Analysis)
		}
	}
	if !strings.HasSuffix(vs[2].Measured, "vs floor 0.250 ms: 3.2× (in-process floor 0.125 ms: 6.4×)") {
		t.Errorf("reviews: %s", vs[2].Measured)
	}
	v := o.hopsView()
	if v.Rounds != 3 || len(v.Rows) != 4 || strings.Join(v.Rows[2], "|") != "productpage → reviews|100|0.800|0.800|0.800|0.250|3.2×|0.125|6.4×|no" {
		t.Errorf("table: %+v", v)
	}
}

// Answers without the header (SERVER_TIMING=false) are not a pass.
func TestJudgeHopsWithoutServerTiming(t *testing.T) {
	res := hops.NewResult()
	res.Add(nil, time.Millisecond, time.Millisecond)
	vs := Judge(hopsOutcome(res, 0.2))
	if len(vs) != 1 || vs[0].Known || vs[0].Measured != "no Server-Timing in the answers" {
		t.Errorf("verdicts: %+v", vs)
	}
}

// perReq is a Measure in which each of stacks (profile, CPU ms per request
// of svc, in turn) served 1000 requests.
func perReq(svc string, stacks ...any) *Measure {
	m := &Measure{Requests: map[string]int64{}, CPU: map[string]map[string]float64{}}
	for i := 0; i+1 < len(stacks); i += 2 {
		p := stacks[i].(string)
		m.Requests[p] = 1000
		m.CPU[p] = map[string]float64{svc: stacks[i+1].(float64)} // seconds over 1000 requests = ms per request
	}
	return m
}

// The header's cost: the route's own CPU with the header on against its
// framework floor, on minus off shown, and whether the header is what tips
// a route over.
func TestJudgeTimingCost(t *testing.T) {
	o := &Outcome{Plan: repoPlan(), Ran: []string{"timing-cost"}, AloneBusy: map[string]*Measure{},
		Framework: map[string]*Measure{
			"details": perReq("details", "tuned", 0.3), "ratings": perReq("ratings", "tuned", 0.13),
			"reviews": perReq("reviews", "tuned", 0.15), "productpage": perReq("productpage", "tuned", 0.5),
		},
		TimingCost: map[string]*Measure{
			"details":     perReq("details", "tuned", 0.40, TimingOffProfile, 0.37),
			"reviews":     perReq("reviews", "tuned", 0.40, TimingOffProfile, 0.30),
			"productpage": perReq("productpage", "tuned", 3.0, TimingOffProfile, 2.9),
		},
	}
	vs := Judge(o)
	byService := map[string]Verdict{}
	for _, v := range vs {
		byService[strings.Fields(v.Subject)[0]] = v
	}
	if len(vs) != 4 || len(byService) != 4 {
		t.Fatalf("verdicts: %+v", vs)
	}
	// 0.40 / 0.3 = 1.33 floors: within 1.5; the header 0.03 ms, 0.1 floors.
	if d := byService["details"]; !d.Known || !d.Met || !strings.HasPrefix(d.Measured, "on 0.400 ms, off 0.370 ms at 1000 RPS") ||
		!strings.Contains(d.Measured, "the header +0.030 ms (+0.10 floors); on 1.33× the floor (0.300 ms)") {
		t.Errorf("details: %+v", d)
	}
	// 0.40/0.15 - 1 = 1.67 floors, off 1.0: the header's 0.1 ms tips it.
	if r := byService["reviews"]; !r.Known || r.Met || !strings.Contains(r.Analysis, "tips") ||
		!strings.Contains(r.Subject, "+ 1 floor for its upstream call") {
		t.Errorf("reviews: %+v", r)
	}
	// 3.0/0.5 - 2 = 4 floors, 3.8 off: over without the header too.
	if p := byService["productpage"]; p.Met || !strings.Contains(p.Analysis, "without the header too") {
		t.Errorf("productpage: %+v", p)
	}
	if n := byService["ratings"]; n.Known {
		t.Errorf("ratings has no cost measure, yet known: %+v", n)
	}
	rows := o.timingCostView().Rows
	if got := strings.Join(rows[0], "|"); got != "details|`/details/0`|1000|0.400|0.370|+0.030 (+0.10)|0.300|0.450|1.33× **yes**" {
		t.Errorf("details row %s", got)
	}
	if got := strings.Join(rows[1], "|"); got != "ratings|`/ratings/0`|1000|-|-|-|-|-|?" {
		t.Errorf("ratings row %s", got)
	}
	if math.IsNaN(TimingCostRows(o.FrameworkRows(), o.TimingCost)[2].Cost()) {
		t.Error("reviews' cost is missing")
	}
}
