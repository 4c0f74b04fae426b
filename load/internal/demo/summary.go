package demo

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// whatDiffers is, per service a demo scenario loads, what the legacy
// profile changes on its path: the cause a verdict is about.
var whatDiffers = map[string]string{
	"details": "details' TCP_NODELAY: legacy details writes each response's head and body in two writes " +
		"without it, and on a kept-alive connection the body waits for the client's delayed ACK (up to 40 ms)",
	"productpage": "keep-alive in productpage: legacy opens a new connection for each request it serves " +
		"and for each call to details, reviews and ratings",
}

// Summary states what the run shows, one short block per scenario: how
// many repetitions it took to decide (stops, from run.json), for each
// metric given a margin the paired difference tuned - legacy with its
// interval and compare's verdict, then what that means in plain words,
// including when it is noise and why, and what limited any row that missed
// its rate. Paragraphs are wrapped for a terminal: the demo's answer fits
// one screen, and the report holds the tables.
func Summary(scs []*scenario.Scenario, tables []*compare.Table, limits [][]string, stops []string) string {
	var b strings.Builder
	b.WriteString("What this run shows (tuned - legacy: mean of the paired repetitions' differences, its interval\n" +
		"and verdict as `bookload compare --margin` gives them; each scenario repeated until decided):\n")
	found := false
	for i, t := range tables {
		s := scs[i]
		var tuned *compare.Row
		for j := range t.Rows {
			if t.Rows[j].Target == "tuned" && t.Baseline == "legacy" {
				tuned = &t.Rows[j]
			}
		}
		if tuned == nil || len(tuned.Difference) == 0 {
			continue
		}
		found = true
		fmt.Fprintf(&b, "\n%s", s.Name)
		if i < len(stops) && stops[i] != "" {
			fmt.Fprintf(&b, ", %s", stops[i])
		}
		b.WriteString(":\n")
		for _, m := range compare.Metrics {
			if d, ok := tuned.Difference[m]; ok && d.Verdict != nil {
				fmt.Fprintf(&b, "- %s\n", d.Line)
			}
		}
		para := meaning(s.Service, tuned)
		for _, l := range limits[i] {
			para += fmt.Sprintf(" Rate not held: %s.", l)
		}
		if len(limits[i]) > 0 {
			para += " A row that missed its rate measured a lower load than asked, and whatever held it back is in its latencies and their spread too."
		}
		b.WriteString(wrap(para, width))
	}
	if !found {
		return "No comparison could be made: no scenario has both a legacy and a tuned row."
	}
	return b.String()
}

// width is where Summary wraps its paragraphs.
const width = 100

// wrap breaks text into lines of at most w columns at spaces, each ending
// in a newline.
func wrap(text string, w int) string {
	var b strings.Builder
	line := 0
	for _, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		if line > 0 && line+1+n > w {
			b.WriteString("\n")
			line = 0
		}
		if line > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += n
	}
	if line > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// meaning says in words what the verdicts of one row show.
func meaning(service string, r *compare.Row) string {
	cause, ok := whatDiffers[service]
	if !ok {
		cause = "the legacy profile's HTTP behaviour"
	}
	var faster, within, slower, open []string
	var gain compare.Difference
	for _, m := range compare.Metrics {
		d, ok := r.Difference[m]
		if !ok || d.Verdict == nil {
			continue
		}
		switch d.Verdict.Result {
		case compare.Faster:
			if len(faster) == 0 || d.MeanMS < gain.MeanMS {
				gain = d
			}
			faster = append(faster, m)
		case compare.Within:
			within = append(within, m)
		case compare.Exceeds:
			slower = append(slower, m)
		default:
			open = append(open, m)
		}
	}
	var out []string
	if len(faster) > 0 {
		out = append(out, fmt.Sprintf("Significant: tuned is faster at %s, by up to %s ms. The cause is %s.",
			strings.Join(faster, " and "), compare.FormatMS(-gain.MeanMS), cause))
	}
	if len(within) > 0 {
		margin := formatMargin(r.Difference[within[0]].Verdict.MarginMS)
		out = append(out, fmt.Sprintf("At %s the two profiles are the same within %s ms: %s costs less than that here.",
			strings.Join(within, " and "), margin, firstClause(cause)))
	}
	if len(slower) > 0 {
		out = append(out, fmt.Sprintf("Tuned is slower at %s by more than the margin, which its settings should not cause: read the rate warnings and rerun on a quiet machine.",
			strings.Join(slower, " and ")))
	}
	if len(open) > 0 {
		var sds []string
		for _, m := range open {
			sds = append(sds, compare.FormatMS(r.Difference[m].SDMS))
		}
		d := r.Difference[open[0]]
		out = append(out, fmt.Sprintf("Noise at %s: in the time given this run cannot tell whether %s matters there "+
			"(its %d repetition pairs differ from each other by %s ms (standard deviation), too much to place the difference on either side of the %s ms margin).",
			strings.Join(open, " and "), firstClause(cause), d.Pairs, strings.Join(sds, " and "), formatMargin(d.Verdict.MarginMS)))
	}
	return strings.Join(out, " ")
}

func formatMargin(ms float64) string { return strconv.FormatFloat(ms, 'f', -1, 64) }

// firstClause is a cause up to its colon: the name of the setting.
func firstClause(cause string) string {
	c, _, _ := strings.Cut(cause, ":")
	return c
}
