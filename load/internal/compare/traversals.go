package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/meshproof"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// Istio publishes its proxies' cost per 1000 requests per second through one
// proxy; a page of the full Bookinfo makes four calls (the client's, and
// productpage's to details and reviews, reviews' to ratings), each through
// a proxy at either end. Set beside one proxy's figure, the cost of a page
// is eight times too high; per traversal it is comparable.

// proxiesPerCall is how many mesh proxies one call passes in a mode: the
// caller's sidecar and the callee's; the ztunnel at either end (one
// process when both are on one node, still its outbound and its inbound
// half).
var proxiesPerCall = map[string]float64{meshproof.NoMesh: 0, meshproof.Sidecar: 2, meshproof.Ambient: 2}

// proxyTraversals is how many times one request of a row passes a mesh
// proxy: its calls per request, from its answers' Server-Timing (the
// client's call and each upstream call, counted over the requests that
// carried the header), times the proxies per call in the mode its
// data-path proof claims. 0 when a repetition has no proof or no hops.
func proxyTraversals(reps []results.Rep) float64 {
	var calls, requests float64
	mode := ""
	for _, r := range reps {
		p := meshproof.FromMetadata(r.EngineMetadata)
		if p == nil || r.Hops == nil || r.Hops.Requests == 0 || (mode != "" && p.Claim.Mode != mode) {
			return 0
		}
		mode = p.Claim.Mode
		for _, d := range r.Hops.Residuals {
			calls += float64(d.SummaryMS.Count)
		}
		requests += float64(r.Hops.Requests)
	}
	per, ok := proxiesPerCall[mode]
	if !ok || requests == 0 {
		return 0
	}
	return per * calls / requests
}

// TraversalMethod defines the per-traversal cost, for the table and JSON.
const TraversalMethod = "per traversal: (the component's vCPU per 1000 requests/s of the page - the baseline row's, the background of idle proxies every row shares) / proxy traversals per request " +
	"(calls per request from Server-Timing x 2 proxies per call in the mode the data-path proof shows: caller's and callee's sidecar, or the ztunnel at either end)"

// mdMeshCostTable prints the mesh's cost by component per 1000 requests per
// second served, and per proxy traversal with the background subtracted,
// beside Istio's published figure per proxy.
func mdMeshCostTable(b *strings.Builder, rows []Row) {
	head := false
	for _, r := range rows {
		for _, g := range clustercost.MeshComponents {
			c, ok := r.ClusterCost.Components[g]
			if !ok {
				continue
			}
			if !head {
				b.WriteString("Mesh cost by component, vCPU per 1000 requests/s served (1000 x CPU-seconds / requests with a 2xx), median [interval]; " +
					TraversalMethod + "; Istio's published figure is per proxy (1 KB payloads), and the ratio is per traversal:\n\n")
				b.WriteString("| profile | target | component | vCPU per 1000 RPS | background | traversals | per traversal | published | ratio | peak MiB | published MiB |\n")
				b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
				head = true
			}
			bg, trav, perTrav, pubCPU, pubMiB, ratio := "", "", "", "", "", ""
			per, base, ok := perTraversal(rows, r, g)
			if ok {
				trav, perTrav = strconv.FormatFloat(r.ProxyTraversals, 'f', 1, 64), strconv.FormatFloat(per, 'f', 3, 64)
				if base != nil {
					bg = strconv.FormatFloat(base.Median, 'f', 3, 64)
				}
			}
			if p, ok := clustercost.Published[g]; ok {
				pubCPU, pubMiB = strconv.FormatFloat(p.VCPU, 'f', 2, 64), strconv.FormatFloat(p.MiB, 'f', 0, 64)
				if perTrav != "" {
					ratio = strconv.FormatFloat(per/p.VCPU, 'f', 1, 64) + "x"
				}
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Profile, r.Target, g,
				c.VCPUPer1000RPS.Format(3), bg, trav, perTrav, pubCPU, ratio, c.PeakMiB.Format(0), pubMiB)
		}
	}
	if head {
		b.WriteString("\n")
	}
}

// perTraversal is component g's vCPU per 1000 requests/s per proxy
// traversal of row r, less the background (rows' baseline, returned too
// when there is one); ok is false without a cost or a traversal count.
func perTraversal(rows []Row, r Row, g string) (per float64, background *clustercost.Stat, ok bool) {
	if r.ClusterCost == nil || r.Baseline || r.ProxyTraversals <= 0 {
		return 0, nil, false
	}
	c, has := r.ClusterCost.Components[g]
	if !has || c.VCPUPer1000RPS == nil {
		return 0, nil, false
	}
	base := 0.0
	for _, o := range rows {
		if o.Baseline && o.Scenario == r.Scenario && o.Profile == r.Profile && o.ClusterCost != nil {
			if bc, has := o.ClusterCost.Components[g]; has && bc.VCPUPer1000RPS != nil {
				background, base = bc.VCPUPer1000RPS, bc.VCPUPer1000RPS.Median
			}
		}
	}
	return (c.VCPUPer1000RPS.Median - base) / r.ProxyTraversals, background, true
}
