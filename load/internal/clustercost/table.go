package clustercost

import (
	"fmt"
	"io"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
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
