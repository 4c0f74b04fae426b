package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube/kubetest"
)

func TestNaturalOrderAndSelectors(t *testing.T) {
	a := kubetest.New()
	defer a.Close()
	for _, n := range []string{"scale-10", "scale-2", "scale-1", "other"} {
		a.Namespaces = append(a.Namespaces, kube.Object{Name: n, Labels: map[string]string{"s": map[bool]string{true: "true"}[n != "other"]}})
	}
	api := &kube.API{Base: a.URL}
	ns, err := api.Namespaces(context.Background(), "s=true")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range ns {
		names = append(names, n.Name)
	}
	if strings.Join(names, " ") != "scale-1 scale-2 scale-10" {
		t.Errorf("namespaces %v", names)
	}
	xs := []string{"a10b2", "a2", "a10b10", "a10", "b"}
	sort.Slice(xs, func(i, j int) bool { return kube.NaturalLess(xs[i], xs[j]) })
	if strings.Join(xs, " ") != "a2 a10 a10b2 a10b10 b" {
		t.Errorf("natural order %v", xs)
	}
	var v any
	if err := api.Get(context.Background(), "/api/v1/nodes/n1/proxy/stats/summary", nil, &v); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("summary error %v", err)
	}
	if got := kube.ServiceProxyPath("ns-1", "fortio:8080"); got != "/api/v1/namespaces/ns-1/services/fortio:8080/proxy" {
		t.Error(got)
	}
	for _, bad := range []string{"127.0.0.1:8001", "ftp://h", "http://h?x=1"} {
		if _, err := kube.ParseBase(bad); err == nil || !strings.Contains(err.Error(), "--api") {
			t.Errorf("ParseBase(%q): %v", bad, err)
		}
	}
}

// TestStartProxy: bookload starts kubectl proxy with a free port, reads the
// port it prints, passes --kubeconfig and --context, and stops it.
func TestStartProxy(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	script := "#!/bin/sh\necho \"$@\" > " + argsFile + "\necho 'Starting to serve on 127.0.0.1:43210'\nexec sleep 60\n"
	bin := filepath.Join(dir, "kubectl")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECTL", bin)
	p, err := kube.StartProxy(context.Background(), "/k/config", "kind-scale")
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	args, _ := os.ReadFile(argsFile)
	if p.URL != "http://127.0.0.1:43210" || strings.TrimSpace(string(args)) != "proxy --address=127.0.0.1 --port=0 --kubeconfig=/k/config --context=kind-scale" {
		t.Errorf("url %s args %q", p.URL, args)
	}
	failing := filepath.Join(dir, "kubectl-failing")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'error: context \"nope\" does not exist' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECTL", failing)
	if _, err := kube.StartProxy(context.Background(), "", "nope"); err == nil || !strings.Contains(err.Error(), `context "nope" does not exist`) {
		t.Errorf("failing kubectl: %v", err)
	}
	t.Setenv("KUBECTL", filepath.Join(dir, "missing"))
	if _, err := kube.StartProxy(context.Background(), "", ""); err == nil || !strings.Contains(err.Error(), "give --api") {
		t.Errorf("missing kubectl: %v", err)
	}
}
