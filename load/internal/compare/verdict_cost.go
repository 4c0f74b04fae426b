package compare

import (
	"fmt"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
)

// costClause is what goes beside a verdict line when the repetitions
// sampled the cluster's cost: the mesh's vCPU per 1000 requests per second
// served, per component, median [interval] across the row's repetitions,
// the queries served per CPU-second of apps and mesh, and the baseline's mesh total (the background every row shares when the
// targets run side by side). Empty without a verdict or a cost.
func (t *Table) costClause(r Row, d Difference) string {
	if d.Verdict == nil || r.ClusterCost == nil || len(r.ClusterCost.Components) == 0 {
		return ""
	}
	var parts []string
	for _, g := range clustercost.MeshComponents {
		if c, ok := r.ClusterCost.Components[g]; ok && c.VCPUPer1000RPS != nil {
			parts = append(parts, g+" "+c.VCPUPer1000RPS.Format(3))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := fmt.Sprintf("; mesh vCPU per 1000 RPS (median [interval], %d repetitions): %s", r.ClusterCost.N, strings.Join(parts, ", "))
	if q := r.ClusterCost.QueriesPerCore; q != nil {
		s += "; queries per core (apps and mesh) " + q.Format(0)
	}
	for _, b := range t.Rows {
		if b.Baseline && b.Scenario == r.Scenario && b.Profile == r.Profile && b.ClusterCost != nil {
			if c, ok := b.ClusterCost.Components["mesh"]; ok && c.VCPUPer1000RPS != nil {
				s += fmt.Sprintf("; %s's mesh %s", b.Target, c.VCPUPer1000RPS.Format(3))
			}
		}
	}
	return s
}
