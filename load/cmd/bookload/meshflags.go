package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/meshproof"
)

// meshFlags are bookload run's proof of the data path: --mesh claims, where
// Istio runs, and how it was built.
type meshFlags struct {
	claims    meshClaims
	istioNS   *string
	buildInfo *string
}

type meshClaims []meshproof.Claim

func (m *meshClaims) String() string { return "" }

func (m *meshClaims) Set(v string) error {
	c, err := meshproof.ParseFlag(v)
	if err != nil {
		return err
	}
	*m = append(*m, c)
	return nil
}

func addMeshFlags(fs *flag.FlagSet) *meshFlags {
	m := &meshFlags{}
	fs.Var(&m.claims, "mesh", "`NAME=NAMESPACE[:MODE]`: prove each repetition of target NAME went through the data path MODE (no-mesh, sidecar or ambient; default: NAME when it is one, else the namespace's labels) of the pods of NAMESPACE, from the mesh's counters; a repetition not proven is marked invalid and left out of every verdict. Repeatable; needs --api or a kubectl proxy (--kubeconfig, --context)")
	m.istioNS = fs.String("istio-namespace", "istio-system", "with --mesh: the `NAMESPACE` of istiod and ztunnel")
	m.buildInfo = fs.String("mesh-build-info", "", "with --mesh: a `FILE` saying how the mesh was built (its first line is recorded in the fingerprint)")
	return m
}

// set says whether any --mesh flag was given; check the others go with it.
func (m *meshFlags) set() (bool, error) {
	if len(m.claims) == 0 {
		if *m.buildInfo != "" || *m.istioNS != "istio-system" {
			return false, fmt.Errorf("--istio-namespace and --mesh-build-info go with --mesh")
		}
		return false, nil
	}
	return true, nil
}

// wrap adds the proof to the engines of the claimed targets.
func (m *meshFlags) wrap(pick func(loadtarget.Target) (engine.Engine, error), api *kube.API, targets []loadtarget.Target) (func(loadtarget.Target) (engine.Engine, error), error) {
	o := &meshproof.Observer{API: api, IstioNamespace: *m.istioNS}
	if *m.buildInfo != "" {
		b, err := os.ReadFile(*m.buildInfo)
		if err != nil {
			return nil, fmt.Errorf("--mesh-build-info: %w", err)
		}
		o.BuildInfo, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	}
	return meshproof.Wrap(pick, o, m.claims, targets)
}
