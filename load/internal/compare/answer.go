package compare

import (
	"fmt"
	"strings"
)

// mdAnswer is the short answer the Markdown starts with: for every target
// with a verdict, one line per (scenario, profile): each metric with a
// margin, its difference, interval and verdict, and the mesh's vCPU per
// 1000 requests/s per proxy traversal where the cost was sampled. The
// tables and the verdicts' full sentences follow it.
func (t *Table) mdAnswer(b *strings.Builder) {
	var lines []string
	for _, r := range t.Rows {
		if r.Baseline {
			continue
		}
		var cells []string
		for _, m := range Metrics {
			d, ok := r.Difference[m]
			if !ok || d.Verdict == nil {
				continue
			}
			v := d.Verdict
			d.Verdict = nil // the verdict in words, not DiffCell's one word
			cells = append(cells, fmt.Sprintf("%s %s ms, %s", m, DiffCell(d), shortVerdict(*v)))
		}
		if len(cells) == 0 {
			continue
		}
		if per, _, ok := perTraversal(t.Rows, r, "mesh"); ok {
			cells = append(cells, fmt.Sprintf("mesh %.3f vCPU per 1000 RPS per traversal (%.1f traversals a request)", per, r.ProxyTraversals))
		}
		lines = append(lines, fmt.Sprintf("- **%s**, %s %s: %s", r.Target, r.Scenario, r.Profile, strings.Join(cells, "; ")))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "## The answer: what each target costs against %s\n\n", t.Baseline)
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n\n(Mean of paired differences [interval], verdict against the margin; how each is made is under the tables.)\n\n")
}

// shortVerdict is a verdict in a few words: "within 0.2 ms", "exceeds 1 ms",
// "inconclusive against 1 ms (about 40 repetitions would decide it)".
func shortVerdict(v Verdict) string {
	m := formatMargin(v.MarginMS)
	switch v.Result {
	case Within:
		return "within " + m + " ms"
	case Exceeds:
		return "exceeds " + m + " ms"
	case Faster:
		return "faster by more than " + m + " ms"
	}
	if v.RepetitionsNeeded > 0 && v.RepetitionsNeeded < maxRepetitions {
		return fmt.Sprintf("inconclusive against %s ms (about %d repetitions would decide it)", m, v.RepetitionsNeeded)
	}
	return "inconclusive against " + m + " ms"
}
