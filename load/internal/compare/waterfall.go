package compare

import (
	"fmt"
	"strconv"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// WaterfallPercentiles are the percentiles of the end-to-end latency whose
// split the waterfall shows, as metric names (each has a --margin).
var WaterfallPercentiles = []string{"p50", "p90", "p99"}

// WaterfallMethod says which split the waterfall shows, for readers of the
// JSON document.
const WaterfallMethod = "at each percentile of the end-to-end latency, the mean of each part over the requests whose latency falls in that percentile's 1% bucket, " +
	"every repetition's requests together (not each part's own percentile: percentiles of a sum are not sums of percentiles); " +
	"parts from each answer's Server-Timing header: a hop is a wait minus the server time under it (network, kernel, mesh), a server's own time is its time minus its call on the critical path; " +
	"the stack follows the critical path (at each server the longest call of the baseline's median requests), so its parts add up to the requests' mean latency, and the other calls are parallel branches; " +
	"differences: mean over paired repetitions of each repetition's own split, Student-t interval, verdicts against the percentile's --margin, Holm-corrected over the hop verdicts of one scenario"

// Waterfall is where the time went in one (scenario, profile), per target.
type Waterfall struct {
	Scenario string `json:"scenario"`
	Profile  string `json:"profile"`
	// Root is the service the load went to; Path the calls the stack
	// follows (Server-Timing names, e.g. reviews, reviews.ratings).
	Root    string            `json:"root"`
	Path    []string          `json:"critical_path"`
	Targets []WaterfallTarget `json:"targets"`
}

// WaterfallTarget is one target's waterfall.
type WaterfallTarget struct {
	Target   string `json:"target"`
	Baseline bool   `json:"baseline"`
	// Requests with Server-Timing metrics, over all repetitions; Without:
	// requests whose answer had none (not in the waterfall).
	Requests int64            `json:"requests"`
	Without  int64            `json:"without_header"`
	Splits   []WaterfallSplit `json:"splits"`
}

// WaterfallSplit is the stack at one percentile of the end-to-end latency.
type WaterfallSplit struct {
	Metric     string  `json:"metric"` // p50, p90, p99
	Percentile float64 `json:"percentile"`
	// Requests in the percentile's bucket, every repetition's together;
	// BucketMS the bucket's lowest latency; TotalMS the sum of the stack
	// (the critical path), the mean latency of those requests.
	Requests int64   `json:"requests"`
	BucketMS float64 `json:"bucket_ms"`
	TotalMS  float64 `json:"total_ms"`
	// TotalDifference is the total's paired difference to the baseline.
	TotalDifference *Difference        `json:"total_difference,omitempty"`
	Segments        []WaterfallSegment `json:"segments"`
}

// WaterfallSegment is one part of a stack, with its paired difference to
// the baseline (absent on the baseline).
type WaterfallSegment struct {
	hops.Segment
	Difference *Difference `json:"difference,omitempty"`
}

// waterfalls fills t.Waterfalls from the repetitions' hops, in the table's
// row order; roots names each scenario's service.
func (t *Table) waterfalls(roots map[string]string, margins Margins) error {
	type group struct{ sc, prof string }
	var order []group
	seen := map[group]bool{}
	for _, r := range t.Rows {
		g := group{r.Scenario, r.Profile}
		if !seen[g] {
			seen[g] = true
			order = append(order, g)
		}
	}
	family := map[string][]*Difference{}
	for _, g := range order {
		w, err := t.waterfall(g.sc, g.prof, roots[g.sc], margins, family)
		if err != nil {
			return err
		}
		if w != nil {
			t.Waterfalls = append(t.Waterfalls, *w)
		}
	}
	for _, ds := range family {
		t.decide(ds)
	}
	// Lines once the verdicts are in.
	for i := range t.Waterfalls {
		w := &t.Waterfalls[i]
		for _, tg := range w.Targets {
			for _, s := range tg.Splits {
				for _, seg := range s.Segments {
					if d := seg.Difference; d != nil {
						d.Line = t.line(Row{Scenario: w.Scenario, Profile: w.Profile, Target: tg.Target}, s.Metric+" "+seg.Label, *d)
					}
				}
				if d := s.TotalDifference; d != nil {
					d.Line = t.line(Row{Scenario: w.Scenario, Profile: w.Profile, Target: tg.Target}, s.Metric+" total", *d)
				}
			}
		}
	}
	return nil
}

// repHops decodes each repetition's hops; nil where a repetition has none.
func repHops(reps []results.Rep) ([]*hops.Result, error) {
	out := make([]*hops.Result, len(reps))
	for i, r := range reps {
		h, err := hops.FromDoc(r.Hops)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s repetition %d: %w", r.Scenario, r.Profile.Name, r.Target, r.Repetition, err)
		}
		out[i] = h
	}
	return out, nil
}

func percentileOf(metric string) float64 {
	p, _ := strconv.ParseFloat(metric[1:], 64)
	return p
}

// waterfall is one (scenario, profile)'s, nil when no repetition recorded
// hops; the hop differences go into family[scenario] to be decided there.
func (t *Table) waterfall(sc, prof, root string, margins Margins, family map[string][]*Difference) (*Waterfall, error) {
	w := &Waterfall{Scenario: sc, Profile: prof, Root: root}
	type target struct {
		row    Row
		reps   []*hops.Result
		merged *hops.Result
	}
	var targets []target
	baseAt := -1
	for _, r := range t.Rows {
		if r.Scenario != sc || r.Profile != prof {
			continue
		}
		reps, err := repHops(t.reps[rowKey{sc, prof, r.Target}])
		if err != nil {
			return nil, err
		}
		merged := hops.NewResult()
		for _, h := range reps {
			merged.Merge(h)
		}
		if merged.Requests == 0 {
			continue
		}
		targets = append(targets, target{r, reps, merged})
		if r.Baseline {
			baseAt = len(targets) - 1
		}
		if merged.Without > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s %s %s: %d of %d requests were answered without a Server-Timing header; the waterfall leaves them out",
				sc, prof, r.Target, merged.Without, merged.Without+merged.Requests))
		}
	}
	if len(targets) == 0 {
		return nil, nil
	}
	ref := targets[0].merged
	var base *target
	if baseAt >= 0 {
		base = &targets[baseAt]
		ref = base.merged
	}
	w.Path = hops.CriticalPath(ref.ByLatency.SplitAt(50))
	if w.Path == nil {
		w.Path = []string{}
	}
	stackOf := func(h *hops.Result, p float64) (hops.Split, []hops.Segment) {
		s := h.ByLatency.SplitAt(p)
		return s, hops.Stack(s, root, w.Path)
	}
	for _, tg := range targets {
		wt := WaterfallTarget{Target: tg.row.Target, Baseline: tg.row.Baseline, Requests: tg.merged.Requests, Without: tg.merged.Without}
		var pairs [][2]int
		if base != nil && !tg.row.Baseline {
			pairs = t.pairs(rowKey{sc, prof, t.Baseline}, rowKey{sc, prof, tg.row.Target})
		}
		for _, m := range WaterfallPercentiles {
			p := percentileOf(m)
			s, segs := stackOf(tg.merged, p)
			ws := WaterfallSplit{Metric: m, Percentile: p, Requests: s.Requests, BucketMS: s.LatencyMS, TotalMS: hops.StackTotal(segs)}
			// Each pair's difference, part by part, from each repetition's own split.
			var diffs map[string][]float64
			var totals []float64
			for _, pr := range pairs {
				b, x := base.reps[pr[0]], tg.reps[pr[1]]
				if b == nil || x == nil || b.Requests == 0 || x.Requests == 0 {
					continue
				}
				_, bs := stackOf(b, p)
				_, xs := stackOf(x, p)
				if diffs == nil {
					diffs = map[string][]float64{}
				}
				bm := byKey(bs)
				for k, v := range byKey(xs) {
					diffs[k] = append(diffs[k], v-bm[k])
				}
				totals = append(totals, hops.StackTotal(xs)-hops.StackTotal(bs))
			}
			for _, seg := range segs {
				ws.Segments = append(ws.Segments, WaterfallSegment{Segment: seg})
			}
			if diffs != nil {
				ws.TotalDifference = newDifference(totals, nil, m)
				t.decide([]*Difference{ws.TotalDifference})
				for i := range ws.Segments {
					d := newDifference(diffs[ws.Segments[i].Key], margins, m)
					ws.Segments[i].Difference = d
					family[sc] = append(family[sc], d)
				}
			}
			wt.Splits = append(wt.Splits, ws)
		}
		w.Targets = append(w.Targets, wt)
	}
	return w, nil
}

func byKey(segs []hops.Segment) map[string]float64 {
	m := make(map[string]float64, len(segs))
	for _, s := range segs {
		m[s.Key] = s.MS
	}
	return m
}
