// Package scaletest is a scale run's cluster on loopback, for tests and
// the self-benchmark: K namespaces labelled as the scale templates label
// them, each with a bookload agent (in-process, standalone) behind a fake
// API server proxy's service proxy path, nodes whose kubelet summaries hold
// the namespaces' apps, sidecars, load clients, ztunnel and istiod with CPU
// counters that grow by a fixed step per sample.
package scaletest

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agentwire"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube/kubetest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scale"
)

// CPU steps per summary call, in core-nanoseconds, by container.
const (
	AppStep     = 10_000_000 // 10 ms per sample per app container
	SidecarStep = 4_000_000
	ZtunnelStep = 6_000_000
	IstiodStep  = 2_000_000
	ClientStep  = 3_000_000
	OtherStep   = 1_000_000
)

// Cluster is the fake.
type Cluster struct {
	API        *kubetest.API
	Namespaces []string
	mu         sync.Mutex
	calls      map[string]uint64 // summary calls per node
	start      time.Time
}

// Options shape the fake.
type Options struct {
	Namespaces int
	Mode       string // the scale-mode label; "" for sidecar
	Nodes      int    // 0 means 2
	// Wrap, if not nil, wraps each namespace's agent handler.
	Wrap func(ns string, h http.Handler) http.Handler
	// Sidecars: whether app pods have an istio-proxy (and ztunnel and
	// istiod run); false is a cluster without a mesh.
	Mesh bool
}

// New starts the fake cluster; Close stops it.
func New(o Options) *Cluster {
	if o.Nodes <= 0 {
		o.Nodes = 2
	}
	if o.Mode == "" {
		o.Mode = "sidecar"
	}
	c := &Cluster{API: kubetest.New(), calls: map[string]uint64{}, start: time.Now().Add(-time.Hour)}
	a := c.API
	for i := 1; i <= o.Namespaces; i++ {
		ns := fmt.Sprintf("scale-%d", i)
		c.Namespaces = append(c.Namespaces, ns)
		a.Namespaces = append(a.Namespaces, kube.Object{Name: ns, Labels: map[string]string{scale.ScaleLabel: "true", scale.ModeLabel: o.Mode}})
		srv := agent.NewServer(agent.DefaultLimits, nil)
		srv.Standalone = true
		h := srv.Handler(http.NotFoundHandler(), agentwire.UIPath)
		if o.Wrap != nil {
			h = o.Wrap(ns, h)
		}
		a.Services[ns+"/fortio:8080"] = h
		a.Pods = append(a.Pods, kube.Object{Namespace: ns, Name: "fortio-0", Labels: map[string]string{"app": "fortio"}})
	}
	a.Namespaces = append(a.Namespaces, kube.Object{Name: "kube-system"})
	for n := range o.Nodes {
		a.Nodes = append(a.Nodes, fmt.Sprintf("node-%d", n))
	}
	if o.Mesh {
		a.Pods = append(a.Pods,
			kube.Object{Namespace: "istio-system", Name: "ztunnel-abc", Labels: map[string]string{"app": "ztunnel"}},
			kube.Object{Namespace: "istio-system", Name: "istiod-xyz", Labels: map[string]string{"app": "istiod"}})
	}
	a.Summary = func(node string) (any, error) { return c.summary(node, o), nil }
	return c
}

// Close stops the fake API server.
func (c *Cluster) Close() { c.API.Close() }

// summary is node's summary at its next call: namespace i's pods on node
// i % nodes, the mesh's and kube-system's on node 0.
func (c *Cluster) summary(node string, o Options) *clustercost.KubeletSummary {
	c.mu.Lock()
	c.calls[node]++
	k := c.calls[node]
	c.mu.Unlock()
	ctr := func(name string, step uint64) clustercost.ContainerStats {
		return clustercost.NewContainerStats(name, c.start, k*step, 10<<20)
	}
	s := &clustercost.KubeletSummary{}
	s.Node.NodeName = node
	for i, ns := range c.Namespaces {
		if fmt.Sprintf("node-%d", i%o.Nodes) != node {
			continue
		}
		app := []clustercost.ContainerStats{ctr("ratings", AppStep)}
		client := []clustercost.ContainerStats{ctr("fortio", ClientStep)}
		if o.Mesh {
			app = append(app, ctr("istio-proxy", SidecarStep))
			client = append(client, ctr("istio-proxy", SidecarStep))
		}
		s.Pods = append(s.Pods, clustercost.NewPodStats(ns, "ratings-0", app...), clustercost.NewPodStats(ns, "fortio-0", client...))
	}
	if node == "node-0" {
		if o.Mesh {
			s.Pods = append(s.Pods, clustercost.NewPodStats("istio-system", "ztunnel-abc", ctr("istio-proxy", ZtunnelStep)),
				clustercost.NewPodStats("istio-system", "istiod-xyz", ctr("discovery", IstiodStep)))
		}
		s.Pods = append(s.Pods, clustercost.NewPodStats("kube-system", "coredns-0", ctr("coredns", OtherStep)))
	}
	return s
}

// WantCPU is the CPU-seconds a window of samples should show per group:
// (samples - 1) steps of every container of the group.
func (c *Cluster) WantCPU(samples int, mesh bool) map[string]float64 {
	n := float64(len(c.Namespaces))
	steps := float64(samples - 1)
	w := map[string]float64{
		clustercost.GroupApps:    steps * n * AppStep / 1e9,
		clustercost.GroupClients: steps * n * ClientStep / 1e9,
		clustercost.GroupOther:   steps * OtherStep / 1e9,
	}
	if mesh {
		w[clustercost.GroupSidecars] = steps * 2 * n * SidecarStep / 1e9
		w[clustercost.GroupZtunnel] = steps * ZtunnelStep / 1e9
		w[clustercost.GroupIstiod] = steps * IstiodStep / 1e9
	}
	return w
}
