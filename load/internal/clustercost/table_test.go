package clustercost

import (
	"math"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// rep is a stored repetition whose cluster cost is c.
func rep(c Cost) results.Rep {
	c.Source = SummarySource
	return results.Rep{EngineMetadata: map[string]any{"cluster_cost": c}}
}

// The mesh's cost per 1000 requests per second is 1000 x CPU-seconds per
// request served, per component; a component that used no CPU (no sidecars
// in an ambient run) is left out, and "mesh" sums them.
func TestSummaryComponentsPer1000RPS(t *testing.T) {
	var reps []results.Rep
	for _, served := range []int64{10000, 20000, 40000} {
		c := Cost{
			WindowSeconds: 10,
			Groups: map[string]GroupCost{
				GroupZtunnel: {CPUSeconds: 0.06 * float64(served) / 1000, PeakMemoryBytes: 12 << 20},
				GroupIstiod:  {CPUSeconds: 0.01 * float64(served) / 1000, PeakMemoryBytes: 80 << 20},
				GroupApps:    {CPUSeconds: 5},
			},
			MeshCPUSeconds: 0.07 * float64(served) / 1000,
			MeshPeakMemory: 92 << 20,
		}
		c.SetRequests(served)
		reps = append(reps, rep(c))
	}
	s := Summarize(reps, 0.95)
	if s == nil {
		t.Fatal("no summary")
	}
	for g, want := range map[string]float64{GroupZtunnel: 0.06, GroupIstiod: 0.01, "mesh": 0.07} {
		c, ok := s.Components[g]
		if !ok || c.VCPUPer1000RPS == nil {
			t.Fatalf("%s: no cost in %+v", g, s.Components)
		}
		if math.Abs(c.VCPUPer1000RPS.Median-want) > 1e-9 {
			t.Errorf("%s: %.4f vCPU per 1000 RPS, want %.4f", g, c.VCPUPer1000RPS.Median, want)
		}
	}
	if got := s.Components[GroupZtunnel].PeakMiB.Median; got != 12 {
		t.Errorf("ztunnel peak %.1f MiB, want 12", got)
	}
	for _, g := range []string{GroupSidecars, GroupWaypoints} {
		if _, ok := s.Components[g]; ok {
			t.Errorf("%s used no CPU but has a cost row", g)
		}
	}
}
