package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// The verdict answers "what does this target cost against the baseline, and
// is that within what I can accept?" For each (scenario, profile, target)
// and each latency metric (plain latency, from each request's send):
//
//   - the difference: mean over repetition pairs of target - baseline, a
//     pair being the same repetition of the same run (run back to back, in
//     rotated order, so the drift they share cancels), with a Student-t
//     interval (stats.Paired says why t);
//   - for a metric given a margin M (--margin p99=1ms), a verdict read off
//     one two-sided interval: within (inside -M..M: equivalence, two
//     one-sided tests at half the level each), exceeds (wholly above M),
//     faster (wholly below -M), else inconclusive, with about how many
//     repetitions would decide it at the spread observed;
//   - Holm's correction over the verdicts of one scenario's table: each
//     verdict's p-value is that of the claim its interval comes closest to
//     making (the three claims exclude each other, so a cell gets one
//     chance), and the interval shown is drawn at the level Holm tested it
//     at, so it agrees with the verdict.
//
// A run made with --until-decided looked at its data after every pair, which
// a fixed-n interval does not survive. Its tables (Table.Sequential) use an
// anytime-valid confidence sequence instead (stats.NewSequence), drawn at
// alpha divided by the family's number of verdicts (Bonferroni, which holds
// for intervals whenever they are read), and the verdicts are read off it.

// Verdict results.
const (
	Within       = "within"
	Exceeds      = "exceeds"
	Faster       = "faster"
	Inconclusive = "inconclusive"
)

// DifferenceMethod is how differences and verdicts are computed, for readers
// of the JSON document.
const DifferenceMethod = "mean of paired repetitions (the same repetition of the same run; by position when the targets ran in different runs) " +
	"of target - baseline, plain latency, Student-t interval; verdicts against --margin from that interval " +
	"(within: inside ±margin, exceeds: above +margin, faster: below -margin), Holm-corrected over the verdicts of one scenario at family-wise alpha"

// SequentialDifferenceMethod is DifferenceMethod for runs made with
// --until-decided.
const SequentialDifferenceMethod = "mean of paired repetitions (the same repetition of the same run, in run order) of target - baseline, plain latency; " +
	"interval: " + stats.SequenceMethod + "; verdicts against --margin from that interval " +
	"(within: inside ±margin, exceeds: above +margin, faster: below -margin), Bonferroni over the verdicts of one scenario at family-wise alpha"

// maxRepetitions caps the "repetitions would decide it" estimate.
const maxRepetitions = 10000

// Difference is one metric's paired difference against the baseline.
type Difference struct {
	Pairs  int     `json:"pairs"`
	MeanMS float64 `json:"mean_ms"`
	SDMS   float64 `json:"sd_ms"` // of the pairs' differences
	// CIMS is the interval of the mean difference at Confidence; absent with
	// fewer than 2 pairs.
	CIMS       *[2]float64 `json:"ci_ms"`
	Confidence float64     `json:"confidence"`
	Verdict    *Verdict    `json:"verdict,omitempty"` // with a margin for this metric
	Line       string      `json:"line"`              // the pasteable sentence
	d          []float64   // the pairs' differences in run order, for the sequential interval
}

// Verdict is a difference judged against a margin.
type Verdict struct {
	MarginMS float64 `json:"margin_ms"`
	Result   string  `json:"result"` // within, exceeds, faster or inconclusive
	// PValue is that of the claim the interval comes closest to, before the
	// correction; Alpha the level Holm tested it at, among Family verdicts.
	PValue float64 `json:"p_value"`
	Alpha  float64 `json:"alpha"`
	Family int     `json:"family"`
	// RepetitionsNeeded (inconclusive only): about how many repetitions per
	// target would decide it if the mean and spread stayed as observed; 0
	// when none would (the difference sits on the margin, or too few pairs
	// to know the spread).
	RepetitionsNeeded int `json:"repetitions_needed,omitempty"`
}

// Margins are the --margin flags: metric -> margin in ms. *Margins is a
// flag.Value taking METRIC=DURATION (p99=1ms, p50=200us).
type Margins map[string]float64

func (m *Margins) String() string {
	if m == nil || len(*m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range Metrics {
		if v, ok := (*m)[k]; ok {
			parts = append(parts, k+"="+formatMargin(v)+"ms")
		}
	}
	return strings.Join(parts, ",")
}

// Set parses one METRIC=DURATION.
func (m *Margins) Set(s string) error {
	name, val, ok := strings.Cut(s, "=")
	if !ok || name == "" || val == "" {
		return fmt.Errorf("want METRIC=DURATION, e.g. p99=1ms")
	}
	if !slices.Contains(Metrics, name) {
		return fmt.Errorf("unknown metric %q (want one of %s)", name, strings.Join(Metrics, ", "))
	}
	d, err := time.ParseDuration(val)
	if err != nil {
		return fmt.Errorf("%s: %q is not a duration (want a number with a unit, e.g. 1ms, 0.2ms, 500us)", name, val)
	}
	if d <= 0 {
		return fmt.Errorf("%s: the margin must be above zero, not %s", name, val)
	}
	if *m == nil {
		*m = Margins{}
	}
	if _, dup := (*m)[name]; dup {
		return fmt.Errorf("%s given twice", name)
	}
	(*m)[name] = float64(d) / float64(time.Millisecond)
	return nil
}

func formatMargin(ms float64) string { return strconv.FormatFloat(ms, 'f', -1, 64) }

// differences fills every non-baseline row's Difference and, for the
// metrics with a margin, its Verdict.
func (t *Table) differences(margins Margins) {
	hasBase := map[[2]string]bool{} // (scenario, profile) with a baseline row
	for _, r := range t.Rows {
		if r.Baseline {
			hasBase[[2]string{r.Scenario, r.Profile}] = true
		}
	}
	type at struct {
		row    int
		metric string
	}
	var cells []at
	family := map[string][]*Difference{} // scenario -> its differences
	diffs := map[at]*Difference{}
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.Baseline || !hasBase[[2]string{r.Scenario, r.Profile}] {
			continue
		}
		bk, rk := rowKey{r.Scenario, r.Profile, t.Baseline}, rowKey{r.Scenario, r.Profile, r.Target}
		pairs := t.pairs(bk, rk)
		for _, m := range Metrics {
			d := make([]float64, len(pairs))
			for k, pr := range pairs {
				x, _ := plainOf(t.reps[rk][pr[1]]).Metric(m)
				y, _ := plainOf(t.reps[bk][pr[0]]).Metric(m)
				d[k] = x - y
			}
			diff := newDifference(d, margins, m)
			diffs[at{i, m}] = diff
			cells = append(cells, at{i, m})
			family[r.Scenario] = append(family[r.Scenario], diff)
		}
	}
	for _, ds := range family {
		t.decide(ds)
	}
	for _, c := range cells {
		r := &t.Rows[c.row]
		if r.Difference == nil {
			r.Difference = map[string]Difference{}
		}
		d := *diffs[c]
		d.Line = t.line(*r, c.metric, d) + t.costClause(*r, d)
		r.Difference[c.metric] = d
	}
}

// newDifference summarizes paired differences d of metric; with a margin
// for it, the Verdict is set up for decide.
func newDifference(d []float64, margins Margins, metric string) *Difference {
	p := stats.NewPaired(d)
	diff := &Difference{Pairs: p.N, MeanMS: p.Mean, SDMS: p.SD, d: d}
	if margin, ok := margins[metric]; ok {
		diff.Verdict = &Verdict{MarginMS: margin}
	}
	return diff
}

// decide judges one family of differences (one scenario's table): each
// with a Verdict is given the claim its interval comes closest to making,
// kept or not by Holm's procedure at family-wise alpha among them; every
// difference gets its interval, at the level Holm tested it at, else at
// 1-alpha. A sequential table's go to decideSequential. Every verdict of
// bookload goes through here.
func (t *Table) decide(ds []*Difference) {
	if t.Sequential {
		decideSequential(ds, t.Alpha)
		return
	}
	alpha := t.Alpha
	var judged []*Difference
	var ps []float64
	var claims []string
	for _, d := range ds {
		if d.Verdict != nil {
			claim, p := closestClaim(paired(*d), d.Verdict.MarginMS)
			judged, ps, claims = append(judged, d), append(ps, p), append(claims, claim)
		}
	}
	reject, lv := stats.Holm(ps, alpha)
	for i, d := range judged {
		v := d.Verdict
		v.Result, v.PValue, v.Alpha, v.Family = Inconclusive, ps[i], lv[i], len(judged)
		if reject[i] {
			v.Result = claims[i]
		} else {
			p := paired(*d)
			v.RepetitionsNeeded = p.PairsFor(gapToDecide(p.Mean, v.MarginMS), lv[i], maxRepetitions)
		}
	}
	for _, d := range ds {
		level := alpha
		if d.Verdict != nil {
			level = d.Verdict.Alpha
		}
		d.Confidence = 1 - level
		if lo, hi, ok := paired(*d).Interval(d.Confidence); ok {
			d.CIMS = &[2]float64{lo, hi}
		}
	}
}

// decideSequential judges a family from anytime-valid confidence sequences,
// each at alpha over the number of verdicts (alpha for a difference without
// one): a verdict is the claim its sequence makes, its PValue the smallest
// level at which the sequence would make the claim it comes closest to.
func decideSequential(ds []*Difference, alpha float64) {
	judged := 0
	for _, d := range ds {
		if d.Verdict != nil {
			judged++
		}
	}
	for _, d := range ds {
		level := alpha
		if d.Verdict != nil {
			level = alpha / float64(judged)
		}
		s := stats.NewSequence(d.d, level)
		d.Confidence = 1 - level
		if s.Bounded() {
			d.CIMS = &[2]float64{s.Lo, s.Hi}
		}
		v := d.Verdict
		if v == nil {
			continue
		}
		m := v.MarginMS
		claims := []struct {
			name  string
			holds func(stats.Sequence) bool
		}{
			{Within, func(s stats.Sequence) bool { return s.Lo > -m && s.Hi < m }},
			{Exceeds, func(s stats.Sequence) bool { return s.Lo > m }},
			{Faster, func(s stats.Sequence) bool { return s.Hi < -m }},
		}
		v.Result, v.PValue, v.Alpha, v.Family = Inconclusive, 1, level, judged
		for _, c := range claims {
			p := stats.SequenceLevel(d.d, c.holds)
			if p < v.PValue {
				v.PValue = p
			}
			if c.holds(s) {
				v.Result = c.name
			}
		}
		if v.Result == Inconclusive {
			p := paired(*d)
			v.RepetitionsNeeded = p.SequencePairsFor(gapToDecide(p.Mean, m), level, maxRepetitions)
		}
	}
}

func paired(d Difference) stats.Paired {
	return stats.Paired{N: d.Pairs, Mean: d.MeanMS, SD: d.SDMS}
}

// closestClaim returns the claim the data come closest to supporting and its
// p-value: the smallest level at which a two-sided interval would lie
// inside -margin..margin (within), above margin (exceeds) or below -margin
// (faster).
func closestClaim(p stats.Paired, margin float64) (string, float64) {
	claims := []struct {
		name string
		p    float64
	}{
		{Within, 2 * math.Max(p.PAbove(-margin), p.PBelow(margin))},
		{Exceeds, 2 * p.PAbove(margin)},
		{Faster, 2 * p.PBelow(-margin)},
	}
	best := claims[0]
	for _, c := range claims[1:] {
		if c.p < best.p {
			best = c
		}
	}
	return best.name, math.Min(best.p, 1)
}

// gapToDecide is how far the interval's half-width must shrink below for
// the verdict the mean points to.
func gapToDecide(mean, margin float64) float64 {
	switch {
	case mean > margin:
		return mean - margin
	case mean < -margin:
		return -margin - mean
	}
	return margin - math.Abs(mean)
}

// pairs matches the repetitions of the baseline's row bk with those of rk:
// the same repetition number of the same run; when the two targets never
// ran in one run, by position (independent repetitions paired in any order
// still give a valid interval, only a wider one than interleaving would).
func (t *Table) pairs(bk, rk rowKey) [][2]int {
	type id struct {
		run string
		rep int
	}
	at := map[id]int{}
	for i, r := range t.reps[bk] {
		at[id{t.repRuns[bk][i], r.Repetition}] = i
	}
	var out [][2]int
	for j, r := range t.reps[rk] {
		if i, ok := at[id{t.repRuns[rk][j], r.Repetition}]; ok {
			out = append(out, [2]int{i, j})
		}
	}
	if len(out) > 0 {
		return out
	}
	for k := range min(len(t.reps[bk]), len(t.reps[rk])) {
		out = append(out, [2]int{k, k})
	}
	return out
}

// line is the sentence a person pastes:
//
//	ambient vs no-mesh, details-100rps-10c 100rps-10c: p99 +0.210 ms [0.150, 0.270], within 1 ms
func (t *Table) line(r Row, metric string, d Difference) string {
	s := fmt.Sprintf("%s vs %s, %s %s: %s %s ms", r.Target, t.Baseline, r.Scenario, r.Profile, metric, Signed(FormatMS(d.MeanMS)))
	if d.CIMS != nil {
		s += fmt.Sprintf(" [%s, %s]", FormatMS(d.CIMS[0]), FormatMS(d.CIMS[1]))
	}
	v := d.Verdict
	if v == nil {
		return s
	}
	margin := formatMargin(v.MarginMS) + " ms"
	switch v.Result {
	case Within:
		return s + ", within " + margin
	case Exceeds:
		return s + ", exceeds " + margin
	case Faster:
		return s + ", faster by more than " + margin
	}
	s += ", inconclusive against " + margin
	switch {
	case d.Pairs < 2:
		return s + fmt.Sprintf(" (%d repetition pair: run at least 3 repetitions)", d.Pairs)
	case v.RepetitionsNeeded == 0:
		return s + " (the difference sits on the margin: no number of repetitions decides it)"
	case v.RepetitionsNeeded >= maxRepetitions:
		return s + fmt.Sprintf(" (more than %d repetitions would be needed)", maxRepetitions)
	}
	return s + fmt.Sprintf(" (about %d repetitions would decide it)", v.RepetitionsNeeded)
}

// StopRule is when a run that repeats until decided stops a profile: every
// whole-request verdict of the Decide metrics (all with a margin, when
// none are named) is decided, every difference of a Precision metric has
// an interval no wider than ± its value, and so has, at p50, the difference
// of every waterfall part named in Parts (a segment key: hop:client,
// server:details, ...).
type StopRule struct {
	Baseline  string
	Margins   Margins
	Decide    []string
	Precision Margins
	Parts     map[string]float64
}

// Open lists what keeps a profile of t from stopping under the rule, one
// line each; done is true when nothing does and the profile has something
// to judge.
func (rule StopRule) Open(t *Table, profile string) (done bool, open []string) {
	metrics := rule.Decide
	if len(metrics) == 0 {
		metrics = Metrics
	}
	judged := 0
	for _, r := range t.Rows {
		if r.Profile != profile || r.Baseline {
			continue
		}
		for _, m := range Metrics {
			d, ok := r.Difference[m]
			if !ok {
				continue
			}
			if d.Verdict != nil && slices.Contains(metrics, m) {
				judged++
				if d.Verdict.Result == Inconclusive {
					open = append(open, d.Line)
				}
			}
			if w, ok := rule.Precision[m]; ok {
				judged++
				if d.CIMS == nil || (d.CIMS[1]-d.CIMS[0])/2 > w {
					open = append(open, fmt.Sprintf("%s (wanted within ±%s ms)", d.Line, formatMargin(w)))
				}
			}
		}
	}
	for _, w := range t.Waterfalls {
		if w.Profile != profile || len(rule.Parts) == 0 {
			continue
		}
		for _, wt := range w.Targets {
			if wt.Baseline {
				continue
			}
			for _, sp := range wt.Splits {
				for _, seg := range sp.Segments {
					hw, ok := rule.Parts[seg.Key]
					if !ok || sp.Metric != "p50" {
						continue
					}
					judged++
					if d := seg.Difference; d == nil || d.CIMS == nil || (d.CIMS[1]-d.CIMS[0])/2 > hw {
						line := fmt.Sprintf("%s vs %s, %s %s: p50 %s", wt.Target, t.Baseline, w.Scenario, profile, seg.Label)
						if d != nil {
							line += " " + DiffCell(*d) + " ms"
						}
						open = append(open, fmt.Sprintf("%s (wanted within ±%s ms)", line, formatMargin(hw)))
					}
				}
			}
		}
	}
	return judged > 0 && len(open) == 0, open
}

// Until is the rule as the runner's Until: after each round it reads the
// run directory as `bookload compare` would and asks Open of the profile.
func (rule StopRule) Until() func(dir, profile string) (bool, []string, error) {
	return func(dir, profile string) (bool, []string, error) {
		l, err := results.Open(dir)
		if err != nil {
			return false, nil, err
		}
		t, err := Build([]*results.Loaded{l}, Options{Baseline: rule.Baseline, Margins: rule.Margins})
		if err != nil {
			return false, nil, err
		}
		done, open := rule.Open(t, profile)
		return done, open, nil
	}
}
