package compare

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WaterfallColumn is one part of a waterfall as the tables show it.
type WaterfallColumn struct {
	Key, Label string
	Parallel   bool
}

// Columns are the parts of w's stacks, in stack order, over every target:
// the critical path, then the parallel branches (Label prefixed "∥ ").
func (w Waterfall) Columns() []WaterfallColumn {
	var out []WaterfallColumn
	seen := map[string]bool{}
	for _, parallel := range []bool{false, true} {
		for _, tg := range w.Targets {
			for _, s := range tg.Splits {
				for _, seg := range s.Segments {
					if seg.Parallel != parallel || seen[seg.Key] {
						continue
					}
					seen[seg.Key] = true
					label := seg.Label
					if parallel {
						label = "∥ " + label
					}
					out = append(out, WaterfallColumn{seg.Key, label, parallel})
				}
			}
		}
	}
	return out
}

// Segment returns the part key of s, if s has it.
func (s WaterfallSplit) Segment(key string) (WaterfallSegment, bool) {
	for _, seg := range s.Segments {
		if seg.Key == key {
			return seg, true
		}
	}
	return WaterfallSegment{}, false
}

// WaterfallCaption says in one paragraph which split a waterfall shows.
const WaterfallCaption = "From each answer's Server-Timing header: at each percentile of the end-to-end latency, " +
	"the mean of each part over the requests at that percentile (every repetition's together), in ms; " +
	"not each part's own percentile, which would not add up (percentiles of a sum are not sums of percentiles). " +
	"A hop (A → B) is what A waited for B minus B's own time: network, kernel and any mesh between them; " +
	"a service's part is its own time, without its call on the path. The parts on the path add up to the total; " +
	"∥ marks a call made beside the path, at the same time (not added)."

// mdWaterfalls prints the waterfalls of scenario sc.
func (t *Table) mdWaterfalls(b *strings.Builder, sc string) {
	for _, w := range t.Waterfalls {
		if w.Scenario != sc {
			continue
		}
		cols := w.Columns()
		fmt.Fprintf(b, "Where the time goes, %s: %s\n\n", w.Profile, WaterfallCaption)
		b.WriteString("| pct | target | requests | total |")
		sep := "|---|---|--:|--:|"
		for _, c := range cols {
			b.WriteString(" " + c.Label + " |")
			sep += "--:|"
		}
		b.WriteString("\n" + sep + "\n")
		var lines []string
		within := 0
		for i, m := range WaterfallPercentiles {
			for _, tg := range w.Targets {
				s := tg.Splits[i]
				pct := ""
				if tg.Target == w.Targets[0].Target {
					pct = m
				}
				name := tg.Target
				if tg.Baseline {
					name += " (baseline)"
				}
				fmt.Fprintf(b, "| %s | %s | %d | %s |", pct, name, s.Requests, FormatMS(s.TotalMS))
				for _, c := range cols {
					cell := ""
					if seg, ok := s.Segment(c.Key); ok {
						cell = FormatMS(seg.MS)
					}
					fmt.Fprintf(b, " %s |", cell)
				}
				b.WriteString("\n")
				if s.TotalDifference == nil {
					continue
				}
				fmt.Fprintf(b, "| | Δ %s | | %s |", tg.Target, DiffCell(*s.TotalDifference))
				for _, c := range cols {
					cell := ""
					if seg, ok := s.Segment(c.Key); ok && seg.Difference != nil {
						cell = DiffCell(*seg.Difference)
						if v := seg.Difference.Verdict; v != nil && v.Result == Within {
							within++
						} else if v != nil {
							lines = append(lines, seg.Difference.Line)
						}
					}
					fmt.Fprintf(b, " %s |", cell)
				}
				b.WriteString("\n")
			}
		}
		b.WriteString("\n")
		if len(lines)+within > 0 {
			corrected := "Holm-corrected"
			if t.Sequential {
				corrected = "Bonferroni-corrected confidence sequences"
			}
			fmt.Fprintf(b, "Hops and services against the margin of their percentile, %s over the part verdicts of this scenario: %d within", corrected, within)
			if len(lines) > 0 {
				b.WriteString("; the others:\n\n")
				for _, l := range lines {
					fmt.Fprintf(b, "- %s\n", l)
				}
			} else {
				b.WriteString(".\n")
			}
			b.WriteString("\n")
		}
	}
}

// waterfallCSV writes every waterfall, one line per (target, percentile,
// part), the total as part "total".
func (t *Table) waterfallCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"scenario", "profile", "target", "baseline", "percentile", "requests", "bucket_ms",
		"part", "label", "kind", "parallel", "start_ms", "ms",
		"pairs", "diff_ms", "diff_lo", "diff_hi", "diff_confidence", "margin_ms", "verdict"}); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	diff := func(d *Difference) []string {
		out := make([]string, 7)
		if d == nil {
			return out
		}
		out[0], out[1], out[4] = strconv.Itoa(d.Pairs), f(d.MeanMS), f(d.Confidence)
		if d.CIMS != nil {
			out[2], out[3] = f(d.CIMS[0]), f(d.CIMS[1])
		}
		if d.Verdict != nil {
			out[5], out[6] = f(d.Verdict.MarginMS), d.Verdict.Result
		}
		return out
	}
	for _, wf := range t.Waterfalls {
		for _, tg := range wf.Targets {
			for _, s := range tg.Splits {
				head := []string{wf.Scenario, wf.Profile, tg.Target, strconv.FormatBool(tg.Baseline), s.Metric,
					strconv.FormatInt(s.Requests, 10), f(s.BucketMS)}
				for _, seg := range s.Segments {
					rec := append(append([]string{}, head...), seg.Key, seg.Label, seg.Kind, strconv.FormatBool(seg.Parallel), f(seg.StartMS), f(seg.MS))
					if err := cw.Write(append(rec, diff(seg.Difference)...)); err != nil {
						return err
					}
				}
				rec := append(append([]string{}, head...), "total", "total", "", "false", "0", f(s.TotalMS))
				if err := cw.Write(append(rec, diff(s.TotalDifference)...)); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
