package meshproof

import (
	"fmt"
	"slices"
	"strings"
)

// MinShare is the share of a repetition's served requests the load client's
// sidecar must have sent upstream for the sidecar path to count as proven
// (every request through it counts once, retries more; the slack covers
// requests the client counted at the very edges of the window).
const MinShare = 0.95

// Proof is one repetition's judgement of its target's claim.
type Proof struct {
	Claim Claim `json:"claim"`
	// Valid: the repetition's requests went through the claimed path.
	// Reasons say why not; Evidence what was shown.
	Valid    bool     `json:"valid"`
	Reasons  []string `json:"reasons,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// Served is the requests the repetition served (without errors).
	Served int64    `json:"served"`
	Before Counters `json:"counters_before"`
	After  Counters `json:"counters_after"`
	// Fingerprint is the mesh before the repetition; FingerprintAfter the
	// mesh after it, only when it changed.
	Fingerprint      Fingerprint  `json:"fingerprint"`
	FingerprintAfter *Fingerprint `json:"fingerprint_after,omitempty"`
}

// Judge checks claim against the observations before and after a
// repetition that served served requests.
func Judge(claim Claim, before, after Observation, served int64) *Proof {
	p := &Proof{Claim: claim, Served: served, Before: before.Counters, After: after.Counters, Fingerprint: before.Fingerprint}
	if !marshalEqual(before.Fingerprint, after.Fingerprint) {
		fa := after.Fingerprint
		p.FingerprintAfter = &fa
	}
	bad := func(format string, args ...any) { p.Reasons = append(p.Reasons, fmt.Sprintf(format, args...)) }
	for _, e := range before.Errors {
		bad("before the repetition, could not read %s", e)
	}
	for _, e := range after.Errors {
		bad("after the repetition, could not read %s", e)
	}
	if len(p.Reasons) > 0 {
		return p
	}
	for _, when := range []struct {
		name string
		fp   Fingerprint
	}{{"before", before.Fingerprint}, {"after", after.Fingerprint}} {
		for _, r := range staticReasons(claim, when.fp) {
			bad("%s the repetition, %s", when.name, r)
		}
	}
	if gone, added := podChanges(before.Fingerprint.Pods, after.Fingerprint.Pods); len(gone)+len(added) > 0 {
		bad("the pods of %s changed during the repetition (gone: %s; new: %s): the fingerprint does not hold for all of it",
			claim.Namespace, list(gone), list(added))
	}
	p.counterChecks(claim, before, after)
	p.Valid = len(p.Reasons) == 0
	return p
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// staticReasons is what in one fingerprint contradicts the claim.
func staticReasons(c Claim, fp Fingerprint) []string {
	var out []string
	if len(fp.Pods) == 0 {
		return []string{fmt.Sprintf("namespace %s has no live pods", c.Namespace)}
	}
	ztunnelOn := map[string]bool{}
	if fp.Istio != nil {
		for _, z := range fp.Istio.Ztunnel {
			ztunnelOn[z.Node] = ztunnelOn[z.Node] || z.Ready
		}
	}
	for _, pod := range fp.Pods {
		at := fmt.Sprintf("pod %s/%s", c.Namespace, pod.Name)
		switch c.Mode {
		case Sidecar:
			switch {
			case !pod.Sidecar:
				out = append(out, at+" has no istio-proxy sidecar (not injected: made before injection was on, or opted out)")
			case !pod.SidecarReady:
				out = append(out, at+"'s istio-proxy is not ready")
			}
			if pod.Ambient() {
				out = append(out, at+" is also redirected to ztunnel ("+RedirectionAnnotation+"=enabled)")
			}
		case Ambient:
			if pod.Sidecar {
				out = append(out, at+" has an istio-proxy sidecar, which an ambient pod must not")
			}
			switch {
			case !pod.Ambient():
				out = append(out, fmt.Sprintf("%s is not enrolled in ambient (%s=%q, not \"enabled\"): ztunnel does not carry its traffic", at, RedirectionAnnotation, pod.Redirection))
			case !ztunnelOn[pod.Node]:
				out = append(out, fmt.Sprintf("%s is on node %s, where no ztunnel is ready", at, pod.Node))
			}
		case NoMesh:
			if pod.Sidecar {
				out = append(out, at+" has an istio-proxy sidecar")
			}
			if pod.Ambient() {
				out = append(out, at+" is redirected to ztunnel ("+RedirectionAnnotation+"=enabled)")
			}
		}
	}
	if (c.Mode == Sidecar || c.Mode == Ambient) && fp.Istio == nil {
		out = append(out, "there is no istiod")
	}
	return out
}

func podChanges(before, after []Pod) (gone, added []string) {
	uid := func(ps []Pod) map[string]string {
		m := map[string]string{}
		for _, p := range ps {
			m[p.UID] = p.Name
		}
		return m
	}
	b, a := uid(before), uid(after)
	for u, n := range b {
		if _, ok := a[u]; !ok {
			gone = append(gone, n)
		}
	}
	for u, n := range a {
		if _, ok := b[u]; !ok {
			added = append(added, n)
		}
	}
	slices.Sort(gone)
	slices.Sort(added)
	return gone, added
}

// counterChecks judges the counters' deltas.
func (p *Proof) counterChecks(c Claim, before, after Observation) {
	bad := func(format string, args ...any) { p.Reasons = append(p.Reasons, fmt.Sprintf(format, args...)) }
	b, a := before.Counters, after.Counters
	if a.ZtunnelConnections < b.ZtunnelConnections || a.ClientRequests < b.ClientRequests {
		bad("a mesh counter went backwards during the repetition (a proxy restarted): ztunnel connections %g -> %g, client sidecar requests %g -> %g",
			b.ZtunnelConnections, a.ZtunnelConnections, b.ClientRequests, a.ClientRequests)
		return
	}
	conns := a.ZtunnelConnections - b.ZtunnelConnections
	reqs := a.ClientRequests - b.ClientRequests
	switch c.Mode {
	case Ambient:
		if conns <= 0 {
			bad("ztunnel opened no connection to or from %s during the repetition (%s did not move): its requests did not go through ztunnel", c.Namespace, ztunnelConnections)
		} else {
			p.Evidence = append(p.Evidence, fmt.Sprintf("ztunnel opened %g connections to or from %s", conns, c.Namespace))
		}
	case Sidecar:
		if b.ClientSidecars == 0 || a.ClientSidecars == 0 {
			bad("no load client pod (%s) with a sidecar in %s: the sidecar counters cannot be tied to the repetition's requests", ClientSelector, c.Namespace)
			return
		}
		if want := MinShare * float64(p.Served); reqs < want || reqs == 0 {
			bad("the load client's sidecar sent %g requests upstream (%s of its outbound clusters) during the repetition, fewer than %.0f%% of the %d served: the requests did not all go through it",
				reqs, envoyRequests, 100*MinShare, p.Served)
		} else {
			p.Evidence = append(p.Evidence, fmt.Sprintf("the load client's sidecar sent %g requests upstream for %d served (%g new TLS handshakes)",
				reqs, p.Served, a.ClientHandshakes-b.ClientHandshakes))
		}
		if conns > 0 {
			bad("ztunnel opened %g connections to or from %s during the repetition: part of the traffic went through ambient", conns, c.Namespace)
		}
	case NoMesh:
		if conns > 0 {
			bad("ztunnel opened %g connections to or from %s during the repetition: a no-mesh target's traffic went through the mesh", conns, c.Namespace)
		}
		if reqs > 0 {
			bad("a sidecar of %s sent %g requests during the repetition: a no-mesh target's traffic went through the mesh", c.Namespace, reqs)
		}
		if len(p.Reasons) == 0 {
			p.Evidence = append(p.Evidence, "no mesh counter moved (no sidecar, ztunnel's connections for "+c.Namespace+" unchanged)")
		}
	}
}
