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
}

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
	return &Summary{
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
