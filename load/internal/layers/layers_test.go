// Package layers holds one test: the package graph of bookload has no arrow
// running back up. Data flows scenario -> runner -> engine -> results; an
// engine that imported the runner, or the agent's client (agentengine) and
// its server (agent) that imported each other, would tie a lower layer to a
// higher one, and the wire between agent and client (agentwire) is the one
// thing both share.
package layers

import (
	"errors"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/bookinfo-bench/bookinfo-bench/"

// rules: no package under From (the package itself or below it) may depend,
// directly or through others, on To (that package exactly). Paths are
// relative to the module.
var rules = []struct{ From, To, Why string }{
	{"load/internal/engine", "load/internal/runner", "the runner drives engines, not the reverse"},
	{"load/internal/engine", "load/internal/agent", "the agent's client speaks agentwire, not the server's code"},
	{"load/internal/agent", "load/internal/engine/agentengine", "the agent's server speaks agentwire, not its client's code"},
	{"load/internal/agent", "load/internal/engine/registry", "the agent runs one engine, it does not choose"},
	{"load/internal/kube", "load/internal/clustercost", "the Kubernetes client knows nothing of what cost is computed from it"},
}

// graph reads the non-test imports of every package under load/, as the
// build for this platform sees them, keeping the module's own.
func graph(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	g := map[string][]string{}
	err = filepath.WalkDir(filepath.Join(root, "load"), func(dir string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		p, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, dir)
		var own []string
		for _, imp := range p.Imports {
			if s, ok := strings.CutPrefix(imp, module); ok {
				own = append(own, s)
			}
		}
		g[filepath.ToSlash(rel)] = own
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// chain is a path of imports from `from` to `to`, nil if there is none.
func chain(g map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append([]string{p}, path...)
			}
			return path
		}
		for _, q := range g[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}

func TestNoArrowRunsBackUp(t *testing.T) {
	g := graph(t)
	for _, r := range rules {
		// A rule about a package that is gone would pass for nothing.
		for _, p := range []string{r.From, r.To} {
			if _, ok := g[p]; !ok {
				t.Fatalf("rule %s -> %s: no package %s (moved? update the rule)", r.From, r.To, p)
			}
		}
		var from []string
		for p := range g {
			if p == r.From || strings.HasPrefix(p, r.From+"/") {
				from = append(from, p)
			}
		}
		slices.Sort(from)
		for _, p := range from {
			if c := chain(g, p, r.To); c != nil {
				t.Errorf("%s depends on %s (%s): %s", p, r.To, r.Why, strings.Join(c, " -> "))
			}
		}
	}
}

// TestChainFindsAnArrow: the check sees an indirect import.
func TestChainFindsAnArrow(t *testing.T) {
	g := map[string][]string{"a": {"b"}, "b": {"c"}, "c": nil}
	if c := chain(g, "a", "c"); !slices.Equal(c, []string{"a", "b", "c"}) {
		t.Errorf("chain a->c = %v", c)
	}
	if c := chain(g, "c", "a"); c != nil {
		t.Errorf("chain c->a = %v, want none", c)
	}
}
