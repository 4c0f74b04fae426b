package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/meshproof"
)

// InvalidRep is a repetition left out of the comparison: its data path was
// not proven (package meshproof), so its numbers may not measure what the
// target's name says.
type InvalidRep struct {
	Run        string `json:"run"`
	Repetition int    `json:"repetition"`
	Reason     string `json:"reason"`
}

// invalid says whether a repetition of run is left out, and records it.
func (t *Table) invalid(k rowKey, run string, rep int, md map[string]any) bool {
	bad, why := meshproof.Invalid(md)
	if bad {
		t.invalidReps[k] = append(t.invalidReps[k], InvalidRep{Run: run, Repetition: rep, Reason: why})
	}
	return bad
}

// invalidWarnings puts every left-out repetition in the warnings, and on its
// row (when any of the row's repetitions is valid).
func (t *Table) invalidWarnings() {
	keys := make([]rowKey, 0, len(t.invalidReps))
	for k := range t.invalidReps {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		return cmp.Or(cmp.Compare(a.scenario, b.scenario), cmp.Compare(a.profile, b.profile), cmp.Compare(a.target, b.target))
	})
	for _, k := range keys {
		for i := range t.Rows {
			r := &t.Rows[i]
			if r.Scenario == k.scenario && r.Profile == k.profile && r.Target == k.target {
				r.Invalid = t.invalidReps[k]
			}
		}
		for _, iv := range t.invalidReps[k] {
			t.Warnings = append(t.Warnings, fmt.Sprintf("%s %s %s rep %d (run %s) is INVALID, left out of every interval and verdict: the data path was not proven: %s",
				k.scenario, k.profile, k.target, iv.Repetition, iv.Run, iv.Reason))
		}
		if len(t.reps[k]) == 0 {
			t.Warnings = append(t.Warnings, fmt.Sprintf("%s %s %s: every repetition is invalid: no row", k.scenario, k.profile, k.target))
		}
	}
}

// NCell is a row's repetition count as the tables show it: "4", or
// "3 (+1 invalid !)" when repetitions were left out.
func NCell(r Row) string {
	n := strconv.Itoa(r.N)
	if len(r.Invalid) > 0 {
		n += fmt.Sprintf(" (+%d invalid !)", len(r.Invalid))
	}
	return n
}
