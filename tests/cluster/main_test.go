//go:build cluster

// Package cluster runs the overlays on a real one-node Kubernetes started on
// this machine by scripts/cluster.sh, with the images built from apps/*, and
// does what a user does with kubectl: apply, check the docs' commands, load
// from inside the cluster, restart, kill, compare: first without a mesh, then
// (mesh_test.go) with Istio built here from source, ambient and sidecar
// beside no mesh. Go runs the files in name order: zz_down_test.go stops the
// cluster last.
//
// Run with `make test-cluster` (or `make test`, last). BOOKINFO_CLUSTER_KEEP=1
// leaves the cluster and its namespaces up afterwards, for a look around. A
// cluster that was up before the suite stays up (its namespaces are deleted),
// and the check that `down` leaves the host as it was is then skipped.
package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// deployErr is what went wrong deploying the two namespaces every test uses.
var deployErr error

var keep = os.Getenv("BOOKINFO_CLUSTER_KEEP") == "1"

// hostBefore is the host's state before the suite started the cluster; empty
// when the cluster was already up (then the suite leaves it up).
var hostBefore string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	wasUp := exec.Command("bash", repo+"/scripts/cluster.sh", "status").Run() == nil
	if !wasUp {
		var err error
		if hostBefore, err = scriptOutput("cluster.sh", "host-state"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	if err := phase("cluster up (control plane, images, DNS)", func() error { return script(ctx, "cluster.sh", "up") }); err != nil {
		fmt.Fprintf(os.Stderr, "cluster: %v\n", err)
		if !wasUp && !keep {
			_ = script(context.Background(), "cluster.sh", "down")
		}
		return 1
	}
	deployErr = phase("deploy "+tuned.ns+" and "+legacy.ns, func() error {
		for _, v := range []variant{tuned, legacy} {
			if err := v.apply(); err != nil {
				return err
			}
		}
		for _, v := range []variant{tuned, legacy} {
			if err := v.rollout(12 * time.Minute); err != nil {
				return err
			}
		}
		return nil
	})
	code := m.Run()
	if keep {
		fmt.Fprintf(os.Stderr, "cluster and namespaces left up (export KUBECONFIG=%s; scripts/cluster.sh down when done)\n", kubeconfig)
		return code
	}
	if wasUp {
		_ = phase("delete the namespaces", func() error { return deleteSuite() })
		fmt.Fprintf(os.Stderr, "the cluster was up before the suite and stays up (scripts/cluster.sh down when done)\n")
		return code
	}
	if !downDone {
		_ = phase("cluster down", func() error { return script(context.Background(), "cluster.sh", "down") })
	}
	return code
}

// downDone: TestZZClusterDownLeavesHostAsFound ran.
var downDone bool

// needDeployed fails a test early when the namespaces never came up.
func needDeployed(t *testing.T) {
	t.Helper()
	if deployErr != nil {
		t.Fatalf("the namespaces did not come up: %v", deployErr)
	}
}

// deleteNamespaces removes the suite's namespaces and waits until they are gone.
func deleteNamespaces(names ...string) error {
	args := append([]string{"delete", "namespace", "--ignore-not-found", "--wait=true", "--timeout=5m"}, names...)
	_, err := kubectl(args...)
	return err
}

// lineDiff lists the lines only in a (-) and only in b (+).
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(a), "\n") {
		if !mb[l] {
			fmt.Fprintf(&out, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(b), "\n") {
		if !ma[l] {
			fmt.Fprintf(&out, "+ %s\n", l)
		}
	}
	return out.String()
}
