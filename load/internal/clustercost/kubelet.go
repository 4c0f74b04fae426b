package clustercost

import (
	"context"
	"net/url"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
)

// KubeletSummary is the part of a kubelet's summary API
// (/api/v1/nodes/NODE/proxy/stats/summary) the cost is computed from.
type KubeletSummary struct {
	Node struct {
		NodeName string `json:"nodeName"`
	} `json:"node"`
	Pods []PodStats `json:"pods"`
}

// PodStats is one pod of a summary.
type PodStats struct {
	PodRef struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		UID       string `json:"uid"`
	} `json:"podRef"`
	Containers []ContainerStats `json:"containers"`
}

// ContainerStats is one container of a pod: its cumulative CPU since it
// started and its current working set.
type ContainerStats struct {
	Name      string       `json:"name"`
	StartTime time.Time    `json:"startTime"`
	CPU       *CPUStats    `json:"cpu"`
	Memory    *MemoryStats `json:"memory"`
}

// CPUStats is a container's cumulative CPU.
type CPUStats struct {
	Time                 time.Time `json:"time"`
	UsageCoreNanoSeconds *uint64   `json:"usageCoreNanoSeconds"`
}

// MemoryStats is a container's memory now.
type MemoryStats struct {
	Time            time.Time `json:"time"`
	WorkingSetBytes *uint64   `json:"workingSetBytes"`
}

// NodeSummary fetches one node's summary through the API server's node proxy.
func NodeSummary(ctx context.Context, a *kube.API, node string) (*KubeletSummary, error) {
	var s KubeletSummary
	if err := a.Get(ctx, "/api/v1/nodes/"+url.PathEscape(node)+"/proxy/stats/summary", nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// NewContainerStats is a container with the given cumulative CPU
// (core-nanoseconds) and working set: a summary as a kubelet would send it,
// for tests and fake clusters.
func NewContainerStats(name string, start time.Time, cpuNanos, memBytes uint64) ContainerStats {
	c := ContainerStats{Name: name, StartTime: start}
	c.CPU = &CPUStats{UsageCoreNanoSeconds: &cpuNanos}
	c.Memory = &MemoryStats{WorkingSetBytes: &memBytes}
	return c
}

// NewPodStats is a pod of a summary, for tests and fake clusters.
func NewPodStats(namespace, name string, containers ...ContainerStats) PodStats {
	p := PodStats{Containers: containers}
	p.PodRef.Namespace, p.PodRef.Name = namespace, name
	return p
}
