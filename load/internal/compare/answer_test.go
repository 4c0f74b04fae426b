package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// The Markdown starts with the answer: one line per target with its
// verdicts, before any table.
func TestMarkdownStartsWithTheAnswer(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthPairedRun(7, 6, 0.5)}, Options{Baseline: "no-mesh", Margins: Margins{"p99": 1, "p50": 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := tb.Write(&md, "md"); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	answer, first := strings.Index(out, "## The answer: what each target costs against no-mesh"), strings.Index(out, "| profile |")
	if answer < 0 || first < answer {
		t.Fatalf("no answer before the tables:\n%s", out)
	}
	line := out[answer:first]
	if !strings.Contains(line, "- **ambient**, ") || !strings.Contains(line, "p50 ") || !strings.Contains(line, "; p99 ") ||
		strings.Count(line, "within")+strings.Count(line, "exceeds")+strings.Count(line, "inconclusive")+strings.Count(line, "faster") != 2 {
		t.Errorf("answer:\n%s", line)
	}
	// Without margins there is no verdict and so no answer block.
	tb, _ = Build([]*results.Loaded{synthPairedRun(7, 6, 0.5)}, Options{Baseline: "no-mesh"})
	md.Reset()
	_ = tb.Write(&md, "md")
	if strings.Contains(md.String(), "## The answer") {
		t.Error("an answer without verdicts")
	}
}
