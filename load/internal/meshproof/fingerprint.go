package meshproof

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ClientSelector picks the load client's pods (svc/fortio: stock fortio or
// the bookload agent) among a namespace's pods.
const ClientSelector = "app=fortio"

// RedirectionAnnotation is what istio-cni sets on a pod whose traffic it
// redirects to ztunnel ("enabled").
const RedirectionAnnotation = "ambient.istio.io/redirection"

// Fingerprint is the mesh as one namespace sees it at one moment.
type Fingerprint struct {
	Istio     *Istio `json:"istio"` // nil: no istiod
	Namespace string `json:"namespace"`
	// Labels are the namespace's mesh labels (istio-injection, istio.io/*).
	Labels map[string]string `json:"labels"`
	// MTLS is the PeerAuthentication mode that applies to the namespace's
	// workloads and where it comes from.
	MTLS string `json:"mtls"`
	Pods []Pod  `json:"pods"`
}

// Istio is the mesh's control plane and node proxies.
type Istio struct {
	Namespace string `json:"namespace"`
	// Image is istiod's image, Tag its tag; Build the tag istiod reports
	// (its istio_build metric); BuildInfo how it was built, when given
	// (bookload run --mesh-build-info).
	Image     string `json:"image"`
	Tag       string `json:"tag"`
	Build     string `json:"build,omitempty"`
	BuildInfo string `json:"build_info,omitempty"`
	// Profile: "ambient" with ztunnel and istio-cni, else "sidecar only".
	Profile string     `json:"profile"`
	Ztunnel []ProxyPod `json:"ztunnel"`
	Notes   []string   `json:"notes,omitempty"`
}

// ProxyPod is a node proxy (ztunnel) pod.
type ProxyPod struct {
	Name  string `json:"name"`
	Node  string `json:"node"`
	Ready bool   `json:"ready"`
}

// Pod is one live pod of the target's namespace.
type Pod struct {
	Name   string `json:"name"`
	UID    string `json:"uid"`
	Node   string `json:"node"`
	Client bool   `json:"client,omitempty"` // the load client (ClientSelector)
	// Sidecar: an istio-proxy container (native sidecar or regular);
	// SidecarReady its readiness; Concurrency its worker threads and where
	// the number comes from.
	Sidecar      bool   `json:"sidecar"`
	SidecarReady bool   `json:"sidecar_ready,omitempty"`
	Concurrency  string `json:"concurrency,omitempty"`
	// Redirection is the pod's ambient.istio.io/redirection annotation
	// ("enabled": istio-cni sends its traffic through ztunnel).
	Redirection string `json:"ambient_redirection,omitempty"`
	// Waypoint is the waypoint its traffic goes through (istio.io/use-waypoint
	// of the pod, else of its namespace).
	Waypoint string `json:"waypoint,omitempty"`
}

// Ambient says whether ztunnel carries the pod's traffic.
func (p Pod) Ambient() bool { return p.Redirection == "enabled" }

// k8sPod is the part of a Pod object read here.
type k8sPod struct {
	Metadata struct {
		Name              string            `json:"name"`
		UID               string            `json:"uid"`
		Labels            map[string]string `json:"labels"`
		Annotations       map[string]string `json:"annotations"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName       string         `json:"nodeName"`
		InitContainers []k8sContainer `json:"initContainers"`
		Containers     []k8sContainer `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase                 string               `json:"phase"`
		InitContainerStatuses []k8sContainerStatus `json:"initContainerStatuses"`
		ContainerStatuses     []k8sContainerStatus `json:"containerStatuses"`
	} `json:"status"`
}

type k8sContainer struct {
	Name          string   `json:"name"`
	RestartPolicy string   `json:"restartPolicy"`
	Args          []string `json:"args"`
	Env           []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
	Resources struct {
		Limits map[string]string `json:"limits"`
	} `json:"resources"`
}

type k8sContainerStatus struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
}

type k8sPodList struct {
	Items []k8sPod `json:"items"`
}

// ParsePods reads a pod list (GET /api/v1/namespaces/NS/pods) into the
// namespace's live pods (not being deleted, not finished), in name order;
// nsLabels are the namespace's labels (its waypoint).
func ParsePods(body []byte, nsLabels map[string]string) ([]Pod, error) {
	var l k8sPodList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("pod list: %w", err)
	}
	var out []Pod
	for _, kp := range l.Items {
		if kp.Metadata.DeletionTimestamp != nil || kp.Status.Phase == "Succeeded" || kp.Status.Phase == "Failed" {
			continue
		}
		out = append(out, podOf(kp, nsLabels))
	}
	slices.SortFunc(out, func(a, b Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func podOf(kp k8sPod, nsLabels map[string]string) Pod {
	m := kp.Metadata
	p := Pod{Name: m.Name, UID: m.UID, Node: kp.Spec.NodeName, Redirection: m.Annotations[RedirectionAnnotation]}
	k, v, _ := strings.Cut(ClientSelector, "=")
	p.Client = m.Labels[k] == v
	p.Waypoint = m.Labels["istio.io/use-waypoint"]
	if p.Waypoint == "" {
		p.Waypoint = nsLabels["istio.io/use-waypoint"]
	}
	if p.Waypoint == "none" {
		p.Waypoint = ""
	}
	var proxy *k8sContainer
	var statuses []k8sContainerStatus
	for i, c := range kp.Spec.InitContainers {
		if c.Name == "istio-proxy" && c.RestartPolicy == "Always" {
			proxy, statuses = &kp.Spec.InitContainers[i], kp.Status.InitContainerStatuses
		}
	}
	for i, c := range kp.Spec.Containers {
		if c.Name == "istio-proxy" {
			proxy, statuses = &kp.Spec.Containers[i], kp.Status.ContainerStatuses
		}
	}
	if proxy == nil {
		return p
	}
	p.Sidecar = true
	for _, s := range statuses {
		if s.Name == "istio-proxy" {
			p.SidecarReady = s.Ready
		}
	}
	p.Concurrency = concurrency(*proxy, m.Annotations)
	return p
}

// concurrency is the sidecar's Envoy worker count as pilot-agent picks it:
// --concurrency, else ProxyConfig's concurrency (the PROXY_CONFIG the
// injector wrote), else the CPU limit rounded up, else 2.
func concurrency(c k8sContainer, annotations map[string]string) string {
	for i, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--concurrency="); ok {
			return v + " (--concurrency)"
		}
		if a == "--concurrency" && i+1 < len(c.Args) {
			return c.Args[i+1] + " (--concurrency)"
		}
	}
	for _, e := range c.Env {
		if e.Name != "PROXY_CONFIG" {
			continue
		}
		var pc struct {
			Concurrency *int `json:"concurrency"`
		}
		if json.Unmarshal([]byte(e.Value), &pc) == nil && pc.Concurrency != nil && *pc.Concurrency > 0 {
			return strconv.Itoa(*pc.Concurrency) + " (ProxyConfig)"
		}
	}
	if lim, ok := c.Resources.Limits["cpu"]; ok {
		if cores, err := parseCPU(lim); err == nil && cores > 0 {
			return strconv.Itoa(int(math.Ceil(cores))) + " (the CPU limit " + lim + ")"
		}
	}
	return "2 (Istio's default: no CPU limit)"
}

func parseCPU(s string) (float64, error) {
	if v, ok := strings.CutSuffix(s, "m"); ok {
		f, err := strconv.ParseFloat(v, 64)
		return f / 1000, err
	}
	return strconv.ParseFloat(s, 64)
}

// MeshLabels keeps a namespace's labels that say which mesh it asks for.
func MeshLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		if k == "istio-injection" || strings.HasPrefix(k, "istio.io/") {
			out[k] = v
		}
	}
	return out
}

// peerAuthentication is the part of a PeerAuthentication read here.
type peerAuthentication struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Selector *struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		MTLS *struct {
			Mode string `json:"mode"`
		} `json:"mtls"`
	} `json:"spec"`
}

// MTLSMode is the mode of the namespace-wide PeerAuthentication of ns, else
// of the mesh-wide one (in rootNS), else Istio's default, PERMISSIVE;
// workload-specific ones are named after it.
func MTLSMode(body []byte, ns, rootNS string) (string, error) {
	var l struct {
		Items []peerAuthentication `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return "", fmt.Errorf("PeerAuthentication list: %w", err)
	}
	mode := func(pa peerAuthentication) string {
		if pa.Spec.MTLS == nil || pa.Spec.MTLS.Mode == "" || pa.Spec.MTLS.Mode == "UNSET" {
			return "PERMISSIVE"
		}
		return pa.Spec.MTLS.Mode
	}
	var nsWide, meshWide string
	var specific []string
	for _, pa := range l.Items {
		whole := pa.Spec.Selector == nil || len(pa.Spec.Selector.MatchLabels) == 0
		switch {
		case pa.Metadata.Namespace == ns && whole:
			nsWide = mode(pa) + " (PeerAuthentication " + ns + "/" + pa.Metadata.Name + ")"
		case pa.Metadata.Namespace == ns:
			specific = append(specific, pa.Metadata.Name+"="+mode(pa))
		case pa.Metadata.Namespace == rootNS && whole:
			meshWide = mode(pa) + " (mesh-wide PeerAuthentication " + rootNS + "/" + pa.Metadata.Name + ")"
		}
	}
	out := "PERMISSIVE (Istio's default: no PeerAuthentication)"
	switch {
	case nsWide != "":
		out = nsWide
	case meshWide != "":
		out = meshWide
	}
	if len(specific) > 0 {
		slices.Sort(specific)
		out += "; workload-specific: " + strings.Join(specific, ", ")
	}
	return out, nil
}
