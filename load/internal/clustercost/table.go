package clustercost

import (
	"fmt"
	"io"
	"math"
	"slices"
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

// WriteMedians prints, for each (scenario, profile, target) of the runs
// with a cluster cost, the median across repetitions of the mesh's
// CPU-seconds per window and of the queries per core, with their min..max:
// the cost side of compare's table. It prints nothing when no repetition
// has a cost.
func WriteMedians(w io.Writer, runs []*results.Loaded) {
	type rowKey struct{ scenario, profile, target string }
	var order []rowKey
	costs := map[rowKey][]*Cost{}
	for _, l := range runs {
		for _, r := range l.Reps {
			c := FromMetadata(r.EngineMetadata)
			if c == nil || c.Groups == nil {
				continue
			}
			k := rowKey{r.Scenario, r.Profile.Name, r.Target}
			if _, ok := costs[k]; !ok {
				order = append(order, k)
			}
			costs[k] = append(costs[k], c)
		}
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintln(w, "\nCluster cost per repetition window: median [min..max] across repetitions (kubelet summary API; queries = requests with a 2xx):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| scenario | profile | target | n | mesh CPU-s | apps CPU-s | mesh peak MiB | queries per mesh core | queries per core (apps+mesh) |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|--:|")
	for _, k := range order {
		cs := costs[k]
		col := func(f func(*Cost) float64, digits int) string {
			var xs []float64
			for _, c := range cs {
				if v := f(c); !math.IsNaN(v) {
					xs = append(xs, v)
				}
			}
			if len(xs) == 0 {
				return "n/a"
			}
			f2 := func(v float64) string { return strconv.FormatFloat(v, 'f', digits, 64) }
			return fmt.Sprintf("%s [%s..%s]", f2(stats.Median(xs)), f2(slices.Min(xs)), f2(slices.Max(xs)))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", k.scenario, k.profile, k.target, len(cs),
			col(func(c *Cost) float64 { return c.MeshCPUSeconds }, 2),
			col(func(c *Cost) float64 { return c.Groups[GroupApps].CPUSeconds }, 2),
			col(func(c *Cost) float64 { return float64(c.MeshPeakMemory) / (1 << 20) }, 0),
			col(func(c *Cost) float64 { return float64(c.QueriesPerMeshCore) }, 0),
			col(func(c *Cost) float64 { return float64(c.QueriesPerCore) }, 0))
	}
}
