// Package clustercost measures what a repetition cost the cluster: it
// samples every node's kubelet summary API (cumulative CPU and working set
// of every container) at the start and end of the repetition's window and
// every few seconds in between, sorts containers into groups (the apps, the
// load clients, the mesh's sidecars, ztunnel, waypoints and istiod, the
// rest), and derives CPU-seconds and peak memory per group and queries per
// core: requests served per CPU-second of the mesh, and of apps and mesh
// together. It wraps any engine (Engine), so `bookload scale` and `bookload
// run --cluster-cost` record it the same way, in each repetition's
// engine_metadata["cluster_cost"].
package clustercost

import (
	"context"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
)

// Groups, in the order tables show them.
const (
	GroupApps      = "apps"
	GroupClients   = "clients"
	GroupSidecars  = "sidecars"
	GroupZtunnel   = "ztunnel"
	GroupWaypoints = "waypoints"
	GroupIstiod    = "istiod"
	GroupOther     = "other"
)

// Groups lists every group.
var Groups = []string{GroupApps, GroupClients, GroupSidecars, GroupZtunnel, GroupWaypoints, GroupIstiod, GroupOther}

// MeshGroups are the groups whose CPU is the mesh's.
var MeshGroups = []string{GroupSidecars, GroupZtunnel, GroupWaypoints, GroupIstiod}

// Label selectors of the pods whose labels decide their group; every other
// pod is sorted by its namespace and container names.
const (
	WaypointSelector = "gateway.networking.k8s.io/gateway-name"
	MeshSelector     = "app in (ztunnel,istiod)"
	ClientSelector   = "app=fortio"
)

// Classifier sorts containers into groups.
type Classifier struct {
	// AppNamespaces are the run's namespaces: their pods are apps (but the
	// load client, and any sidecar, which is the mesh's).
	AppNamespaces map[string]bool
	pods          map[string]string // namespace/pod -> group, from labels
}

// NewClassifier returns a classifier for the run's namespaces.
func NewClassifier(appNamespaces []string) *Classifier {
	c := &Classifier{AppNamespaces: map[string]bool{}, pods: map[string]string{}}
	for _, ns := range appNamespaces {
		c.AppNamespaces[ns] = true
	}
	return c
}

// Learn lists the pods whose labels decide their group (waypoints, ztunnel,
// istiod, load clients) and remembers them; call it again to learn pods
// made since (what was learnt is kept).
func (c *Classifier) Learn(ctx context.Context, api *kube.API) error {
	for _, q := range []struct{ selector, group string }{
		{WaypointSelector, GroupWaypoints}, {MeshSelector, ""}, {ClientSelector, GroupClients},
	} {
		pods, err := api.Pods(ctx, q.selector)
		if err != nil {
			return err
		}
		for _, p := range pods {
			g := q.group
			if g == "" {
				g = map[string]string{"ztunnel": GroupZtunnel, "istiod": GroupIstiod}[p.Labels["app"]]
			}
			// A waypoint's label wins over any other.
			if old := c.pods[p.Namespace+"/"+p.Name]; g != "" && old != GroupWaypoints {
				c.pods[p.Namespace+"/"+p.Name] = g
			}
		}
	}
	return nil
}

// SetPod records a pod's group directly (tests, and callers that know).
func (c *Classifier) SetPod(namespace, pod, group string) { c.pods[namespace+"/"+pod] = group }

// Group is the group of one container. A sidecar (container istio-proxy)
// is the mesh's wherever it runs, the load client's included; waypoints and
// ztunnel run a container of that name too, and are known by their pods.
func (c *Classifier) Group(namespace, pod, container string) string {
	switch g := c.pods[namespace+"/"+pod]; g {
	case GroupWaypoints, GroupZtunnel, GroupIstiod:
		return g
	case GroupClients:
		if container == "istio-proxy" {
			return GroupSidecars
		}
		return g
	}
	switch {
	case strings.HasPrefix(pod, "ztunnel-"):
		return GroupZtunnel
	case strings.HasPrefix(pod, "istiod-") || container == "discovery":
		return GroupIstiod
	case container == "istio-proxy":
		return GroupSidecars
	case container == "fortio" && c.AppNamespaces[namespace]:
		return GroupClients
	case c.AppNamespaces[namespace]:
		return GroupApps
	}
	return GroupOther
}
