package compare

import (
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/meshproof"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// pageRep is a repetition of the full page in mode: 1000 answers with
// Server-Timing, each with the client's call, details, reviews and, in
// ratings of them, reviews' call to ratings.
func pageRep(mode string, ratings int64) results.Rep {
	n := func(c int64) hops.Distribution { return hops.Distribution{SummaryMS: latency.Summary{Count: c}} }
	return results.Rep{
		EngineMetadata: map[string]any{meshproof.MetadataKey: map[string]any{"valid": true, "claim": map[string]any{"mode": mode}}},
		Hops: &hops.Doc{Requests: 1000, Residuals: map[string]hops.Distribution{
			hops.ClientHop: n(1000), "details": n(1000), "reviews": n(1000), "reviews.ratings": n(ratings)}},
	}
}

// Traversals come from the call graph the answers show and the mode the
// proof claims; without either there is no count.
func TestProxyTraversals(t *testing.T) {
	for _, c := range []struct {
		name string
		reps []results.Rep
		want float64
	}{
		{"sidecar page", []results.Rep{pageRep(meshproof.Sidecar, 1000), pageRep(meshproof.Sidecar, 1000)}, 8},
		{"ambient page, reviews v1 (no ratings)", []results.Rep{pageRep(meshproof.Ambient, 0)}, 6},
		{"half the reviews call ratings", []results.Rep{pageRep(meshproof.Sidecar, 500)}, 7},
		{"no mesh", []results.Rep{pageRep(meshproof.NoMesh, 1000)}, 0},
		{"no proof", []results.Rep{{Hops: pageRep(meshproof.Sidecar, 1000).Hops}}, 0},
		{"modes mixed", []results.Rep{pageRep(meshproof.Sidecar, 1000), pageRep(meshproof.Ambient, 1000)}, 0},
	} {
		if got := proxyTraversals(c.reps); got != c.want {
			t.Errorf("%s: %v traversals, want %v", c.name, got, c.want)
		}
	}
}

// The cost table sets the per-traversal figure, background subtracted,
// against Istio's per-proxy one, with the per-page figure beside it.
func TestMeshCostPerTraversal(t *testing.T) {
	stat := func(m float64) *clustercost.Stat { return &clustercost.Stat{Median: m, CI: [2]float64{m, m}} }
	cost := func(sidecars float64) *clustercost.Summary {
		return &clustercost.Summary{N: 4, Components: map[string]clustercost.ComponentCost{"sidecars": {VCPUPer1000RPS: stat(sidecars)}}}
	}
	rows := []Row{
		{Scenario: "s", Profile: "p", Target: "no-mesh", Baseline: true, ClusterCost: cost(0.1)},
		{Scenario: "s", Profile: "p", Target: "sidecar", ClusterCost: cost(1.7), ProxyTraversals: 8},
	}
	var b strings.Builder
	mdMeshCostTable(&b, rows)
	for _, want := range []string{
		"| p | sidecar | sidecars | 1.700 [1.700..1.700] | 0.100 | 8.0 | 0.200 | 0.20 | 1.0x |",
		"| p | no-mesh | sidecars | 0.100 [0.100..0.100] |  |  |  | 0.20 |  |",
		"per traversal: (the component's vCPU per 1000 requests/s of the page - the baseline row's",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
