package clustercost

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"time"
)

// SummarySource is cluster_cost.source of the kubelet summary API.
const SummarySource = "kubelet summary API (/api/v1/nodes/NODE/proxy/stats/summary): containers' usageCoreNanoSeconds and workingSetBytes"

// Ratio is a queries-per-core figure; NaN (no CPU to divide by) is
// written "n/a".
type Ratio float64

// NA is the ratio when the divisor is zero.
var NA = Ratio(math.NaN())

// IsNA reports whether r is "n/a".
func (r Ratio) IsNA() bool { return math.IsNaN(float64(r)) }

// MarshalJSON writes a number, or "n/a".
func (r Ratio) MarshalJSON() ([]byte, error) {
	if r.IsNA() {
		return []byte(`"n/a"`), nil
	}
	return json.Marshal(math.Round(float64(r)*10) / 10)
}

// UnmarshalJSON reads a number or "n/a".
func (r *Ratio) UnmarshalJSON(b []byte) error {
	if string(b) == `"n/a"` || string(b) == "null" {
		*r = NA
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*r = Ratio(f)
	return nil
}

// String is the figure as tables show it.
func (r Ratio) String() string {
	if r.IsNA() {
		return "n/a"
	}
	return strconv.FormatFloat(float64(r), 'f', 0, 64)
}

// GroupCost is one group's cost over a window.
type GroupCost struct {
	CPUSeconds      float64 `json:"cpu_seconds"`
	PeakMemoryBytes uint64  `json:"peak_memory_bytes"`
	Containers      int     `json:"containers"`
}

// Cost is engine_metadata["cluster_cost"].
type Cost struct {
	Source        string               `json:"source"`
	WindowSeconds float64              `json:"window_seconds"`
	Samples       int                  `json:"samples"`
	Nodes         int                  `json:"nodes"`
	Groups        map[string]GroupCost `json:"groups"`
	// MeshCPUSeconds is sidecars + ztunnel + waypoints + istiod;
	// AppsMeshCPUSeconds adds the apps (not the load clients, not other).
	MeshCPUSeconds     float64 `json:"mesh_cpu_seconds"`
	AppsMeshCPUSeconds float64 `json:"apps_mesh_cpu_seconds"`
	MeshPeakMemory     uint64  `json:"mesh_peak_memory_bytes"`
	// RequestsServed are the repetition's requests that got a 2xx.
	RequestsServed int64 `json:"requests_served"`
	// QueriesPerMeshCore is RequestsServed per CPU-second of the mesh ("n/a"
	// when the mesh used none); QueriesPerCore per CPU-second of apps and
	// mesh together.
	QueriesPerMeshCore Ratio `json:"queries_per_mesh_core"`
	QueriesPerCore     Ratio `json:"queries_per_core"`
	// CounterResets counts containers whose CPU counter went back (a
	// restarted container): their usage since the restart is counted.
	CounterResets int      `json:"counter_resets,omitempty"`
	Notes         []string `json:"notes,omitempty"`
}

// SetRequests sets the requests served and the ratios derived from them.
func (c *Cost) SetRequests(served int64) {
	c.RequestsServed = served
	c.QueriesPerMeshCore, c.QueriesPerCore = NA, NA
	if c.MeshCPUSeconds > 0 {
		c.QueriesPerMeshCore = Ratio(float64(served) / c.MeshCPUSeconds)
	}
	if c.AppsMeshCPUSeconds > 0 {
		c.QueriesPerCore = Ratio(float64(served) / c.AppsMeshCPUSeconds)
	}
}

// FromMetadata reads cluster_cost back from a stored repetition's
// engine_metadata (nil when there is none).
func FromMetadata(md map[string]any) *Cost {
	v, ok := md["cluster_cost"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var c Cost
	if json.Unmarshal(b, &c) != nil || c.Source == "" {
		return nil
	}
	return &c
}

type key struct{ ns, pod, container string }

type point struct {
	start time.Time
	cpu   uint64
}

// Snapshot is one sample of every node.
type Snapshot struct {
	At    time.Time
	Nodes int
	// Failed names the nodes whose summary could not be read, with why.
	Failed []string
	cpu    map[key]point
	mem    map[key]uint64
}

// NewSnapshot makes a snapshot from summaries taken at about the same time.
func NewSnapshot(at time.Time, sums []*KubeletSummary) Snapshot {
	s := Snapshot{At: at, cpu: map[key]point{}, mem: map[key]uint64{}}
	for _, sum := range sums {
		if sum == nil {
			continue
		}
		s.Nodes++
		for _, p := range sum.Pods {
			for _, c := range p.Containers {
				k := key{p.PodRef.Namespace, p.PodRef.Name, c.Name}
				if c.CPU != nil && c.CPU.UsageCoreNanoSeconds != nil {
					s.cpu[k] = point{start: c.StartTime, cpu: *c.CPU.UsageCoreNanoSeconds}
				}
				if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
					s.mem[k] = *c.Memory.WorkingSetBytes
				}
			}
		}
	}
	return s
}

// Accumulator follows the containers' CPU counters over a window's
// snapshots. A counter is cumulative since its container started, so the
// CPU of a window is the sum of each counter's increments between
// consecutive samples; when a counter goes back or its container's start
// time changes (a restart), the new value is the usage since the restart
// and is counted whole, never a negative difference. A container first seen
// after the first sample counts whole when it started inside the window.
type Accumulator struct {
	start  time.Time
	first  bool
	last   map[key]point
	cpu    map[key]uint64
	mems   []map[key]uint64
	nodes  int
	resets int
	notes  []string
	end    time.Time
}

// NewAccumulator starts a window at start.
func NewAccumulator(start time.Time) *Accumulator {
	return &Accumulator{start: start, first: true, last: map[key]point{}, cpu: map[key]uint64{}}
}

// Add takes one snapshot, in time order.
func (a *Accumulator) Add(s Snapshot) {
	for k, p := range s.cpu {
		prev, seen := a.last[k]
		switch {
		case !seen && a.first:
			// the baseline
		case !seen:
			if p.start.After(a.start) {
				a.cpu[k] += p.cpu
			}
		case !p.start.Equal(prev.start) || p.cpu < prev.cpu:
			a.cpu[k] += p.cpu
			a.resets++
		default:
			a.cpu[k] += p.cpu - prev.cpu
		}
		a.last[k] = p
	}
	for _, f := range s.Failed {
		a.notes = append(a.notes, s.At.UTC().Format(time.RFC3339)+": "+f)
	}
	a.mems = append(a.mems, s.mem)
	a.nodes = max(a.nodes, s.Nodes)
	a.first = false
	a.end = s.At
}

// Cost is the window's cost, containers sorted into groups by c.
func (a *Accumulator) Cost(c *Classifier) *Cost {
	out := &Cost{
		Source: SummarySource, WindowSeconds: a.end.Sub(a.start).Seconds(), Samples: len(a.mems), Nodes: a.nodes,
		Groups: map[string]GroupCost{}, CounterResets: a.resets, Notes: a.notes,
	}
	seen := map[string]map[key]bool{}
	for _, g := range Groups {
		out.Groups[g] = GroupCost{}
		seen[g] = map[key]bool{}
	}
	for k := range a.last {
		g := c.Group(k.ns, k.pod, k.container)
		seen[g][k] = true
	}
	for k, ns := range a.cpu {
		g := c.Group(k.ns, k.pod, k.container)
		gc := out.Groups[g]
		gc.CPUSeconds += float64(ns) / 1e9
		out.Groups[g] = gc
	}
	for _, m := range a.mems {
		sum := map[string]uint64{}
		mesh := uint64(0)
		for k, b := range m {
			g := c.Group(k.ns, k.pod, k.container)
			sum[g] += b
			seen[g][k] = true
		}
		for g, b := range sum {
			gc := out.Groups[g]
			gc.PeakMemoryBytes = max(gc.PeakMemoryBytes, b)
			out.Groups[g] = gc
		}
		for _, g := range MeshGroups {
			mesh += sum[g]
		}
		out.MeshPeakMemory = max(out.MeshPeakMemory, mesh)
	}
	for g, ks := range seen {
		gc := out.Groups[g]
		gc.Containers = len(ks)
		out.Groups[g] = gc
	}
	for _, g := range MeshGroups {
		out.MeshCPUSeconds += out.Groups[g].CPUSeconds
	}
	out.AppsMeshCPUSeconds = out.MeshCPUSeconds + out.Groups[GroupApps].CPUSeconds
	sort.Strings(out.Notes)
	out.SetRequests(0)
	return out
}
