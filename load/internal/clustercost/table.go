package clustercost

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// WriteTable prints the cost of each stored repetition that has one (a
// Markdown table and the notes); it prints nothing when none has.
func WriteTable(w io.Writer, reps []results.Rep) {
	var rows, notes []string
	for _, r := range reps {
		c := FromMetadata(r.EngineMetadata)
		if c == nil {
			continue
		}
		if c.Groups == nil {
			notes = append(notes, fmt.Sprintf("%s %s rep %d: no cluster cost: %v", r.Target, r.Profile.Name, r.Repetition, r.EngineMetadata["cluster_cost"]))
			continue
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %d | %.1f | %.2f | %.2f | %.2f | %.1f | %s | %s |",
			r.Target, r.Profile.Name, r.Repetition, c.WindowSeconds, c.MeshCPUSeconds, c.Groups[GroupApps].CPUSeconds,
			c.Groups[GroupClients].CPUSeconds, float64(c.MeshPeakMemory)/(1<<20), c.QueriesPerMeshCore, c.QueriesPerCore))
		for _, n := range c.Notes {
			notes = append(notes, fmt.Sprintf("%s %s rep %d: %s", r.Target, r.Profile.Name, r.Repetition, n))
		}
	}
	if len(rows) == 0 && len(notes) == 0 {
		return
	}
	fmt.Fprintln(w, "### Cluster cost per repetition window (kubelet summary API; queries = requests with a 2xx)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | profile | rep | window s | mesh CPU-s | apps CPU-s | clients CPU-s | mesh peak MiB | queries per mesh core | queries per core (apps+mesh) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
	for _, n := range notes {
		fmt.Fprintln(w, "\n> "+n)
	}
}

// Stat is one cost figure over a row's repetitions: the median with the
// confidence interval compare gives latencies (stats.Summarize).
type Stat struct {
	Median float64    `json:"median"`
	CI     [2]float64 `json:"ci"`
}

// Summary is the cost of one compare row (scenario, profile, target) over
// its repetitions that recorded one. A queries-per-core figure is nil (JSON
// null, "n/a") when no repetition had a value: no mesh, for instance.
type Summary struct {
	N                  int   `json:"n"`
	MeshCPUSeconds     *Stat `json:"mesh_cpu_seconds"`
	AppsCPUSeconds     *Stat `json:"apps_cpu_seconds"`
	ClientsCPUSeconds  *Stat `json:"clients_cpu_seconds"`
	MeshPeakMiB        *Stat `json:"mesh_peak_mib"`
	QueriesPerMeshCore *Stat `json:"queries_per_mesh_core"`
	QueriesPerCore     *Stat `json:"queries_per_core"`
	// Components is the mesh's cost by component (sidecars, ztunnel,
	// waypoints, istiod, and "mesh" for all of them): vCPU per 1000
	// requests per second served, and peak memory. Absent for a component
	// that used no CPU in any repetition (no such component in the run).
	Components map[string]ComponentCost `json:"components,omitempty"`
}

// ComponentCost is one mesh component's cost over a row's repetitions.
type ComponentCost struct {
	// VCPUPer1000RPS is 1000 x CPU-seconds / requests served: the cores it
	// keeps busy for each 1000 requests per second.
	VCPUPer1000RPS *Stat `json:"vcpu_per_1000_rps"`
	PeakMiB        *Stat `json:"peak_mib"`
}

// Published is Istio's published cost of each data-plane component per
// 1000 requests per second (1 KB payloads; Istio's "Performance and
// Scalability" page): what the tables set the measured figures beside.
var Published = map[string]struct{ VCPU, MiB float64 }{
	GroupZtunnel:   {0.06, 12},
	GroupSidecars:  {0.20, 60},
	GroupWaypoints: {0.25, 60},
}

// MeshComponents are the components Components reports, in table order;
// "mesh" is their sum.
var MeshComponents = append(append([]string{}, MeshGroups...), "mesh")

// Summarize is the cost of reps (one row's repetitions), nil when none has
// one.
func Summarize(reps []results.Rep, confidence float64) *Summary {
	var cs []*Cost
	for _, r := range reps {
		if c := FromMetadata(r.EngineMetadata); c != nil && c.Groups != nil {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	stat := func(f func(*Cost) float64) *Stat {
		var xs []float64
		for _, c := range cs {
			if v := f(c); !math.IsNaN(v) {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			return nil
		}
		s := stats.Summarize(xs, confidence)
		return &Stat{Median: s.Median, CI: [2]float64{s.Lo, s.Hi}}
	}
	comps := map[string]ComponentCost{}
	for _, g := range MeshComponents {
		cpu := func(c *Cost) float64 {
			if g == "mesh" {
				return c.MeshCPUSeconds
			}
			return c.Groups[g].CPUSeconds
		}
		used := false
		for _, c := range cs {
			used = used || cpu(c) > 0
		}
		if !used {
			continue
		}
		comps[g] = ComponentCost{
			VCPUPer1000RPS: stat(func(c *Cost) float64 {
				if c.RequestsServed <= 0 {
					return math.NaN()
				}
				return 1000 * cpu(c) / float64(c.RequestsServed)
			}),
			PeakMiB: stat(func(c *Cost) float64 {
				if g == "mesh" {
					return float64(c.MeshPeakMemory) / (1 << 20)
				}
				return float64(c.Groups[g].PeakMemoryBytes) / (1 << 20)
			}),
		}
	}
	if len(comps) == 0 {
		comps = nil
	}
	return &Summary{
		Components:         comps,
		N:                  len(cs),
		MeshCPUSeconds:     stat(func(c *Cost) float64 { return c.MeshCPUSeconds }),
		AppsCPUSeconds:     stat(func(c *Cost) float64 { return c.Groups[GroupApps].CPUSeconds }),
		ClientsCPUSeconds:  stat(func(c *Cost) float64 { return c.Groups[GroupClients].CPUSeconds }),
		MeshPeakMiB:        stat(func(c *Cost) float64 { return float64(c.MeshPeakMemory) / (1 << 20) }),
		QueriesPerMeshCore: stat(func(c *Cost) float64 { return float64(c.QueriesPerMeshCore) }),
		QueriesPerCore:     stat(func(c *Cost) float64 { return float64(c.QueriesPerCore) }),
	}
}

// Format is "median [lo..hi]" with digits decimals, or "n/a".
func (s *Stat) Format(digits int) string {
	if s == nil {
		return "n/a"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', digits, 64) }
	return fmt.Sprintf("%s [%s..%s]", f(s.Median), f(s.CI[0]), f(s.CI[1]))
}
