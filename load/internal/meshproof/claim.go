// Package meshproof proves, for each repetition of a cluster target, that
// its requests went through the data path the target's name claims: no
// mesh, Istio sidecars or Istio ambient (ztunnel). Before and after each
// repetition it records the mesh's fingerprint (Istio's build and profile,
// every pod of the target's namespace with its sidecar, ambient redirection
// and waypoint, the mTLS mode, proxy concurrency, nodes) and the mesh's
// counters (ztunnel's connections, the load client's sidecar's outbound
// requests), all read through the API server (pod proxy), and judges the
// claim from them. A repetition it cannot prove is kept but marked invalid,
// with the reasons, and compare leaves it out of every interval and verdict.
package meshproof

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The data paths a target can claim.
const (
	NoMesh  = "no-mesh"
	Sidecar = "sidecar"
	Ambient = "ambient"
)

// Modes lists the claims, in the order they are explained.
var Modes = []string{NoMesh, Sidecar, Ambient}

// Claim is one target's claimed data path and where its pods live.
type Claim struct {
	Target    string `json:"target"`
	Namespace string `json:"namespace"`
	// Mode is no-mesh, sidecar or ambient; From says where it came from:
	// "flag" (NAME=NS:MODE), "name" (the target is named after a mode) or
	// "labels" (the namespace's labels, read before the run).
	Mode string `json:"mode"`
	From string `json:"from"`
}

var namespaceRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// ParseFlag parses one --mesh NAME=NAMESPACE[:MODE]. Without MODE, a target
// named no-mesh, sidecar or ambient (or starting with one and "-", as
// ambient-waypoint) claims that mode; any other leaves Mode empty, for
// ModeFromLabels.
func ParseFlag(s string) (Claim, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return Claim{}, fmt.Errorf("--mesh %q: want NAME=NAMESPACE[:MODE], e.g. ambient=bookinfo-ambient or fast=bookinfo-x:sidecar", s)
	}
	ns, mode, hasMode := strings.Cut(rest, ":")
	if !namespaceRE.MatchString(ns) {
		return Claim{}, fmt.Errorf("--mesh %q: %q is not a namespace name (lower-case letters, digits and '-', at most 63)", s, ns)
	}
	c := Claim{Target: name, Namespace: ns}
	switch {
	case hasMode:
		if !slices.Contains(Modes, mode) {
			return Claim{}, fmt.Errorf("--mesh %q: mode %q is not one of %s", s, mode, strings.Join(Modes, ", "))
		}
		c.Mode, c.From = mode, "flag"
	default:
		for _, m := range Modes {
			if name == m || strings.HasPrefix(name, m+"-") {
				c.Mode, c.From = m, "name"
			}
		}
	}
	return c, nil
}

// ModeFromLabels is the mode a namespace's labels ask for, as
// scripts/mesh-compare.sh reads them: istio-injection=enabled (or an
// istio.io/rev without injection disabled) is sidecar,
// istio.io/dataplane-mode=ambient is ambient, neither is no-mesh, both an
// error.
func ModeFromLabels(ns string, labels map[string]string) (string, error) {
	inj, rev := labels["istio-injection"], labels["istio.io/rev"]
	sidecar := inj == "enabled" || (rev != "" && inj != "disabled")
	ambient := labels["istio.io/dataplane-mode"] == "ambient"
	switch {
	case sidecar && ambient:
		return "", fmt.Errorf("namespace %s is labelled for both sidecar injection and ambient: give the mode (--mesh NAME=%s:MODE)", ns, ns)
	case sidecar:
		return Sidecar, nil
	case ambient:
		return Ambient, nil
	}
	return NoMesh, nil
}
