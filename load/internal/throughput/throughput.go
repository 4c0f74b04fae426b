// Package throughput is what a repetition moved and what moving it cost:
// Gbit/s from the bytes the engine counted over the repetition's duration,
// and CPU per Gbit/s, from this process's CPU (local runs, where bookload
// is the load generator and, for the echo scenarios, the echo server too)
// and from the cluster cost (package clustercost: the mesh's components,
// and apps plus mesh). It is the single-connection bulk throughput of the
// ztunnel throughput post (iperf3, one stream), measured with HTTP bodies.
package throughput

import (
	"math"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/stats"
)

// Keys of engine_metadata this package reads; the fortio engine writes the
// byte counts, Engine the process CPU.
const (
	BytesReceived = "bytes_received"
	BytesSent     = "bytes_sent"
	ProcessCPU    = "process_cpu_seconds"
)

// Method says how the figures are computed, for readers of the JSON.
const Method = "Gbit/s = 8 x (bytes received + request bodies sent) / repetition duration; " +
	"CPU per Gbit/s = CPU-seconds / gigabits moved (cores busy per Gbit/s): bookload's own process locally " +
	"(load generator, and the in-process echo server), the mesh (sidecars, ztunnel, waypoints, istiod) and apps+mesh in a cluster"

// Summary is one compare row's throughput over its repetitions: each
// figure's median with its interval (nil when no repetition had it).
type Summary struct {
	N                    int               `json:"n"`
	GbitPerS             *clustercost.Stat `json:"gbit_per_s"`
	ProcessCoresPerGbit  *clustercost.Stat `json:"process_cores_per_gbit_per_s,omitempty"`
	MeshCoresPerGbit     *clustercost.Stat `json:"mesh_cores_per_gbit_per_s,omitempty"`
	AppsMeshCoresPerGbit *clustercost.Stat `json:"apps_mesh_cores_per_gbit_per_s,omitempty"`
}

// Gigabits is what one repetition moved, in 10^9 bits; ok is false when
// the engine did not count bytes.
func Gigabits(r results.Rep) (gbit float64, ok bool) {
	in, okIn := number(r.EngineMetadata, BytesReceived)
	out, _ := number(r.EngineMetadata, BytesSent)
	if !okIn {
		return 0, false
	}
	return 8 * (in + out) / 1e9, true
}

// BulkBytesPerRequest is the average a row must move per request for its
// throughput to be shown: below it the scenario measures latency (a 1 KB
// echo, a details page), and its Gbit/s would only restate its rate.
const BulkBytesPerRequest = 64 << 10

// Summarize is the throughput of reps (one row's repetitions), nil when
// none counted bytes or they moved under BulkBytesPerRequest per request.
func Summarize(reps []results.Rep, confidence float64) *Summary {
	var gbps, proc, mesh, appsMesh []float64
	var moved float64
	var requests int64
	for _, r := range reps {
		gbit, ok := Gigabits(r)
		if !ok || r.DurationSeconds <= 0 {
			continue
		}
		moved += gbit * 1e9 / 8
		requests += r.Requests
		gbps = append(gbps, gbit/r.DurationSeconds)
		if gbit <= 0 {
			continue
		}
		if cpu, ok := number(r.EngineMetadata, ProcessCPU); ok {
			proc = append(proc, cpu/gbit)
		}
		if c := clustercost.FromMetadata(r.EngineMetadata); c != nil && c.Groups != nil {
			mesh = append(mesh, c.MeshCPUSeconds/gbit)
			appsMesh = append(appsMesh, c.AppsMeshCPUSeconds/gbit)
		}
	}
	if len(gbps) == 0 || requests == 0 || moved/float64(requests) < BulkBytesPerRequest {
		return nil
	}
	return &Summary{
		N:                    len(gbps),
		GbitPerS:             stat(gbps, confidence),
		ProcessCoresPerGbit:  stat(proc, confidence),
		MeshCoresPerGbit:     stat(mesh, confidence),
		AppsMeshCoresPerGbit: stat(appsMesh, confidence),
	}
}

func stat(xs []float64, confidence float64) *clustercost.Stat {
	if len(xs) == 0 {
		return nil
	}
	s := stats.Summarize(xs, confidence)
	return &clustercost.Stat{Median: s.Median, CI: [2]float64{s.Lo, s.Hi}}
}

// number reads a numeric engine_metadata value: an int64 as the engine
// wrote it, a float64 once read back from JSON.
func number(md map[string]any, key string) (float64, bool) {
	switch v := md[key].(type) {
	case float64:
		return v, !math.IsNaN(v)
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	}
	return 0, false
}
