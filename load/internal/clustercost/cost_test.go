package clustercost

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func sec(s float64) uint64 { return uint64(s * 1e9) }

func summary(pods ...PodStats) *KubeletSummary { return &KubeletSummary{Pods: pods} }

func classifier() *Classifier {
	c := NewClassifier([]string{"scale-1", "scale-2"})
	c.SetPod("istio-system", "ztunnel-x", GroupZtunnel)
	c.SetPod("scale-1", "waypoint-0", GroupWaypoints)
	c.SetPod("scale-1", "fortio-0", GroupClients)
	return c
}

func TestClassify(t *testing.T) {
	c := classifier()
	cases := []struct{ ns, pod, container, want string }{
		{"scale-1", "ratings-0", "ratings", GroupApps},
		{"scale-1", "ratings-0", "istio-proxy", GroupSidecars},
		{"scale-1", "fortio-0", "fortio", GroupClients},
		{"scale-1", "fortio-0", "istio-proxy", GroupSidecars}, // the client's sidecar is the mesh's
		{"scale-2", "fortio-9", "fortio", GroupClients},       // not yet learnt: by container name
		{"scale-1", "waypoint-0", "istio-proxy", GroupWaypoints},
		{"istio-system", "ztunnel-x", "istio-proxy", GroupZtunnel},
		{"istio-system", "ztunnel-new", "istio-proxy", GroupZtunnel},
		{"istio-system", "istiod-7c9", "discovery", GroupIstiod},
		{"kube-system", "coredns-1", "coredns", GroupOther},
		{"other-ns", "ratings-0", "ratings", GroupOther},
	}
	for _, cs := range cases {
		if g := c.Group(cs.ns, cs.pod, cs.container); g != cs.want {
			t.Errorf("%s/%s/%s: %s, want %s", cs.ns, cs.pod, cs.container, g, cs.want)
		}
	}
}

// TestCostAcrossARestart: two snapshots 10 s apart (and one between). The
// app's counter grows 4 s; a sidecar restarts between the samples (its
// counter goes from 50 s back to 1.5 s): the 1.5 s since its restart count,
// never 1.5 - 50; a container that appears in the window counts whole, one
// that started before the window and is first seen late does not; the
// memory peak is the largest sum of one sample.
func TestCostAcrossARestart(t *testing.T) {
	restart := t0.Add(5 * time.Second)
	old := t0.Add(-time.Hour)
	first := summary(
		NewPodStats("scale-1", "ratings-0", NewContainerStats("ratings", old, sec(100), 100<<20), NewContainerStats("istio-proxy", old, sec(50), 40<<20)),
		NewPodStats("istio-system", "ztunnel-x", NewContainerStats("istio-proxy", old, sec(7), 30<<20)),
	)
	mid := summary(
		NewPodStats("scale-1", "ratings-0", NewContainerStats("ratings", old, sec(102), 120<<20), NewContainerStats("istio-proxy", old, sec(51), 60<<20)),
		NewPodStats("istio-system", "ztunnel-x", NewContainerStats("istio-proxy", old, sec(7.5), 30<<20)),
	)
	last := summary(
		NewPodStats("scale-1", "ratings-0", NewContainerStats("ratings", old, sec(104), 110<<20), NewContainerStats("istio-proxy", restart, sec(1.5), 20<<20)),
		NewPodStats("istio-system", "ztunnel-x", NewContainerStats("istio-proxy", old, sec(8), 30<<20)),
		// a new app pod, started in the window
		NewPodStats("scale-2", "ratings-1", NewContainerStats("ratings", t0.Add(3*time.Second), sec(0.25), 10<<20)),
		// an old pod first seen now (its node failed before): not counted
		NewPodStats("scale-2", "ratings-2", NewContainerStats("ratings", old, sec(500), 10<<20)),
	)
	a := NewAccumulator(t0)
	a.Add(NewSnapshot(t0, []*KubeletSummary{first}))
	a.Add(NewSnapshot(t0.Add(5*time.Second), []*KubeletSummary{mid}))
	a.Add(NewSnapshot(t0.Add(10*time.Second), []*KubeletSummary{last}))
	c := a.Cost(classifier())
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	near("apps CPU-s", c.Groups[GroupApps].CPUSeconds, 4+0.25)
	near("sidecars CPU-s", c.Groups[GroupSidecars].CPUSeconds, 1+1.5)
	near("ztunnel CPU-s", c.Groups[GroupZtunnel].CPUSeconds, 1)
	near("mesh CPU-s", c.MeshCPUSeconds, 3.5)
	near("apps+mesh CPU-s", c.AppsMeshCPUSeconds, 7.75)
	near("window", c.WindowSeconds, 10)
	if c.CounterResets != 1 || c.Samples != 3 {
		t.Errorf("resets %d samples %d, want 1 and 3", c.CounterResets, c.Samples)
	}
	if g := c.Groups[GroupApps]; g.PeakMemoryBytes != 130<<20 || g.Containers != 3 {
		t.Errorf("apps peak %d MiB over %d containers, want 130 MiB (the last sample) over 3", g.PeakMemoryBytes>>20, g.Containers)
	}
	if c.MeshPeakMemory != 90<<20 {
		t.Errorf("mesh peak %d MiB, want 90 (the middle sample)", c.MeshPeakMemory>>20)
	}
	c.SetRequests(700)
	near("queries per mesh core", float64(c.QueriesPerMeshCore), 200)
	near("queries per core", float64(c.QueriesPerCore), 700/7.75)

	// Stored and read back, "n/a" included.
	none := NewAccumulator(t0)
	none.Add(NewSnapshot(t0, []*KubeletSummary{summary(NewPodStats("scale-1", "ratings-0", NewContainerStats("ratings", old, sec(1), 1)))}))
	none.Add(NewSnapshot(t0.Add(time.Second), []*KubeletSummary{summary(NewPodStats("scale-1", "ratings-0", NewContainerStats("ratings", old, sec(2), 1)))}))
	nm := none.Cost(classifier())
	nm.SetRequests(10)
	b, err := json.Marshal(map[string]any{"cluster_cost": nm})
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	if err := json.Unmarshal(b, &md); err != nil {
		t.Fatal(err)
	}
	back := FromMetadata(md)
	if back == nil || !back.QueriesPerMeshCore.IsNA() || back.QueriesPerMeshCore.String() != "n/a" || back.QueriesPerCore.String() != "10" {
		t.Errorf("no mesh: read back %+v from %s", back, b)
	}
}
