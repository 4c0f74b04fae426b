//go:build cluster

package cluster

import (
	"context"
	"testing"
)

// The last test: stop the cluster and check the host is as it was before.
func TestZZClusterDownLeavesHostAsFound(t *testing.T) {
	if keep || hostBefore == "" {
		t.Skip("the cluster stays up (BOOKINFO_CLUSTER_KEEP=1, or it was up before the suite)")
	}
	if err := phase("delete the namespaces", func() error { return deleteSuite() }); err != nil {
		t.Error(err)
	}
	downDone = true
	if err := phase("cluster down", func() error { return script(context.Background(), "cluster.sh", "down") }); err != nil {
		t.Fatal(err)
	}
	after, err := scriptOutput("cluster.sh", "host-state")
	if err != nil {
		t.Fatal(err)
	}
	if after != hostBefore {
		t.Errorf("the host is not as the suite found it (ports, processes, iptables, mounts, bridge, netns, cgroups, sysctls):\n%s",
			lineDiff(hostBefore, after))
	}
}
