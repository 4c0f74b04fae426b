package meshproof

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
)

// Ports the counters are read from, through the API server's pod proxy.
const (
	ztunnelMetricsPort = 15020 // ztunnel's /metrics
	envoyStatsPort     = 15090 // a sidecar's Envoy /stats/prometheus
	istiodMetricsPort  = 15014 // istiod's /metrics (istio_build)
)

// Counter names read from the proxies.
const (
	ztunnelConnections = "istio_tcp_connections_opened_total"
	envoyRequests      = "envoy_cluster_upstream_rq_total"
	envoyHandshakes    = "envoy_cluster_ssl_handshake"
)

// Counters are the mesh's counters for one namespace at one moment.
type Counters struct {
	// ZtunnelConnections: connections ztunnel opened with a workload of the
	// namespace as source or destination (istio_tcp_connections_opened_total,
	// every ztunnel); 0 without ztunnel.
	ZtunnelConnections float64 `json:"ztunnel_connections_opened"`
	// ClientRequests and ClientHandshakes: requests and TLS handshakes of
	// the outbound clusters of the load client's sidecars
	// (envoy_cluster_upstream_rq_total, envoy_cluster_ssl_handshake).
	ClientRequests   float64 `json:"client_sidecar_upstream_requests"`
	ClientHandshakes float64 `json:"client_sidecar_tls_handshakes"`
	// ClientSidecars is how many client sidecars were read.
	ClientSidecars int `json:"client_sidecars"`
}

// Observation is one reading of the fingerprint and the counters; Errors
// says what could not be read (then nothing read is proof).
type Observation struct {
	At          time.Time   `json:"at"`
	Fingerprint Fingerprint `json:"fingerprint"`
	Counters    Counters    `json:"counters"`
	Errors      []string    `json:"errors,omitempty"`
}

// Observer reads observations through an API server proxy.
type Observer struct {
	API *kube.API
	// IstioNamespace is where istiod and ztunnel run ("" means istio-system).
	IstioNamespace string
	// BuildInfo is how the mesh was built, as its builder wrote it (optional).
	BuildInfo string
	Now       func() time.Time
}

func (o *Observer) istioNS() string {
	if o.IstioNamespace != "" {
		return o.IstioNamespace
	}
	return "istio-system"
}

// NamespaceLabels reads a namespace's labels.
func (o *Observer) NamespaceLabels(ctx context.Context, ns string) (map[string]string, error) {
	var obj struct {
		Metadata kube.Object `json:"metadata"`
	}
	if err := o.API.Get(ctx, "/api/v1/namespaces/"+url.PathEscape(ns), nil, &obj); err != nil {
		return nil, fmt.Errorf("namespace %s: %w", ns, err)
	}
	return obj.Metadata.Labels, nil
}

// Observe reads namespace ns's fingerprint and counters.
func (o *Observer) Observe(ctx context.Context, ns string) Observation {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	ob := Observation{At: now(), Fingerprint: Fingerprint{Namespace: ns}}
	fail := func(what string, err error) { ob.Errors = append(ob.Errors, what+": "+err.Error()) }
	labels, err := o.NamespaceLabels(ctx, ns)
	if err != nil {
		fail("namespace", err)
		return ob
	}
	ob.Fingerprint.Labels = MeshLabels(labels)
	body, err := o.API.GetText(ctx, "/api/v1/namespaces/"+url.PathEscape(ns)+"/pods")
	if err == nil {
		ob.Fingerprint.Pods, err = ParsePods(body, labels)
	}
	if err != nil {
		fail("pods of "+ns, err)
		return ob
	}
	ob.Fingerprint.Istio, err = o.istio(ctx)
	if err != nil {
		fail("Istio", err)
	}
	ob.Fingerprint.MTLS = "no mesh (no istiod)"
	if ob.Fingerprint.Istio != nil {
		body, err := o.API.GetText(ctx, "/apis/security.istio.io/v1/peerauthentications")
		if err == nil {
			ob.Fingerprint.MTLS, err = MTLSMode(body, ns, o.istioNS())
		}
		if err != nil {
			fail("PeerAuthentications", err)
		}
		if ob.Fingerprint.Istio.Ztunnel != nil {
			ob.Counters.ZtunnelConnections, err = o.ztunnelConnections(ctx, ob.Fingerprint.Istio.Ztunnel, ns)
			if err != nil {
				fail("ztunnel's counters", err)
			}
		}
	}
	for _, p := range ob.Fingerprint.Pods {
		if !p.Client || !p.Sidecar {
			continue
		}
		body, err := o.API.GetText(ctx, kube.PodProxyPath(ns, p.Name, envoyStatsPort)+"/stats/prometheus")
		var samples []Sample
		if err == nil {
			samples, err = ParseMetrics(body)
		}
		if err != nil {
			fail("the sidecar counters of "+p.Name, err)
			continue
		}
		outbound := func(l map[string]string) bool { return strings.HasPrefix(l["cluster_name"], "outbound|") }
		ob.Counters.ClientRequests += Sum(samples, envoyRequests, outbound)
		ob.Counters.ClientHandshakes += Sum(samples, envoyHandshakes, outbound)
		ob.Counters.ClientSidecars++
	}
	return ob
}

func notFound(err error) bool {
	var se *kube.StatusError
	return errors.As(err, &se) && se.Code == http.StatusNotFound
}

// istio reads the control plane: nil, nil when there is no istiod.
func (o *Observer) istio(ctx context.Context) (*Istio, error) {
	ns := o.istioNS()
	apps := "/apis/apps/v1/namespaces/" + url.PathEscape(ns)
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Image string `json:"image"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := o.API.Get(ctx, apps+"/deployments/istiod", nil, &d); err != nil {
		if notFound(err) {
			return nil, nil
		}
		return nil, err
	}
	is := &Istio{Namespace: ns, BuildInfo: o.BuildInfo}
	if cs := d.Spec.Template.Spec.Containers; len(cs) > 0 {
		is.Image = cs[0].Image
		if i := strings.LastIndex(is.Image, ":"); i > strings.LastIndex(is.Image, "/") {
			is.Tag = is.Image[i+1:]
		}
	}
	istiods, err := o.podsOf(ctx, ns, "app=istiod")
	if err != nil {
		return nil, err
	}
	if len(istiods) > 0 {
		body, err := o.API.GetText(ctx, kube.PodProxyPath(ns, istiods[0].Name, istiodMetricsPort)+"/metrics")
		var samples []Sample
		if err == nil {
			samples, err = ParseMetrics(body)
		}
		if err != nil {
			is.Notes = append(is.Notes, "istiod's build not read: "+err.Error())
		}
		for _, s := range samples {
			if s.Name == "istio_build" && s.Labels["tag"] != "" {
				is.Build = s.Labels["tag"]
			}
		}
	}
	var ds struct{}
	haveZtunnel := o.API.Get(ctx, apps+"/daemonsets/ztunnel", nil, &ds) == nil
	haveCNI := o.API.Get(ctx, apps+"/daemonsets/istio-cni-node", nil, &ds) == nil
	switch {
	case haveZtunnel && haveCNI:
		is.Profile = "ambient (istiod, istio-cni, ztunnel)"
	case haveZtunnel:
		is.Profile = "ztunnel without istio-cni (no pod is redirected)"
	default:
		is.Profile = "sidecar only (no ztunnel)"
	}
	if haveZtunnel {
		zs, err := o.podsOf(ctx, ns, "app=ztunnel")
		if err != nil {
			return is, err
		}
		is.Ztunnel = append([]ProxyPod{}, zs...)
	}
	return is, nil
}

// podsOf lists the live pods of ns matching selector, ready when every
// container is.
func (o *Observer) podsOf(ctx context.Context, ns, selector string) ([]ProxyPod, error) {
	var l k8sPodList
	if err := o.API.Get(ctx, "/api/v1/namespaces/"+url.PathEscape(ns)+"/pods", url.Values{"labelSelector": {selector}}, &l); err != nil {
		return nil, err
	}
	var out []ProxyPod
	for _, kp := range l.Items {
		if kp.Metadata.DeletionTimestamp != nil || kp.Status.Phase != "Running" {
			continue
		}
		ready := len(kp.Status.ContainerStatuses) > 0
		for _, s := range kp.Status.ContainerStatuses {
			ready = ready && s.Ready
		}
		out = append(out, ProxyPod{Name: kp.Metadata.Name, Node: kp.Spec.NodeName, Ready: ready})
	}
	return out, nil
}

// ztunnelConnections sums every ztunnel's connections to or from ns.
func (o *Observer) ztunnelConnections(ctx context.Context, zs []ProxyPod, ns string) (float64, error) {
	var total float64
	for _, z := range zs {
		body, err := o.API.GetText(ctx, kube.PodProxyPath(o.istioNS(), z.Name, ztunnelMetricsPort)+"/metrics")
		if err != nil {
			return 0, fmt.Errorf("%s: %w", z.Name, err)
		}
		c, err := ZtunnelConnections(body, ns)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", z.Name, err)
		}
		total += c
	}
	return total, nil
}

// ZtunnelConnections sums a ztunnel metrics page's connections opened to or
// from workloads of ns.
func ZtunnelConnections(page []byte, ns string) (float64, error) {
	samples, err := ParseMetrics(page)
	if err != nil {
		return 0, err
	}
	return Sum(samples, ztunnelConnections, func(l map[string]string) bool {
		return l["destination_workload_namespace"] == ns || l["source_workload_namespace"] == ns
	}), nil
}

// marshalEqual says whether a and b encode to the same JSON.
func marshalEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
