package kube

import (
	"context"
	"net/url"
	"time"
)

// Summary is the part of a kubelet's summary API
// (/api/v1/nodes/NODE/proxy/stats/summary) bookload reads.
type Summary struct {
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
func (a *API) NodeSummary(ctx context.Context, node string) (*Summary, error) {
	var s Summary
	if err := a.Get(ctx, "/api/v1/nodes/"+url.PathEscape(node)+"/proxy/stats/summary", nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
