package manifests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Every target is applied to the real API server with strict field
// validation, then applied again: the second apply must change nothing, and
// neither may print a warning (deprecations, Pod Security "warn" labels).
func TestApply(t *testing.T) {
	for _, tg := range allTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			r := render(t, tg)
			c := cluster(t)
			out, stderr, err := c.kubectl(nil, "apply", "--validate=strict", "-f", r.file)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != len(r.objects) {
				t.Errorf("apply reported %d objects, the rendering has %d:\n%s", n, len(r.objects), out)
			}
			if w := warnings(stderr); w != "" {
				t.Errorf("apply warned:\n%s", w)
			}
			out, stderr, err = c.kubectl(nil, "apply", "--validate=strict", "-f", r.file)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				// A PodDisruptionBudget's selector has the patch strategy
				// "replace", so client-side apply always sends it again and
				// says "configured" for an identical object.
				if strings.HasPrefix(line, "poddisruptionbudget.policy/") && strings.HasSuffix(line, " configured") {
					continue
				}
				if !strings.HasSuffix(line, " unchanged") {
					t.Errorf("second apply changed something: %s", line)
				}
			}
			if w := warnings(stderr); w != "" {
				t.Errorf("second apply warned:\n%s", w)
			}
		})
	}
}

func warnings(stderr string) string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Warning:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Every pod template, turned into a Pod, is created (dry run) in a namespace
// that enforces Pod Security "restricted": the API server's own admission
// plugin decides, not a copy of its rules.
func TestPodSecurityRestricted(t *testing.T) {
	const ns = "pss-restricted"
	for _, tg := range allTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			r := render(t, tg)
			c := cluster(t)
			nsYAML := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
`, ns)
			if _, _, err := c.kubectl([]byte(nsYAML), "apply", "-f", "-"); err != nil {
				t.Fatal(err)
			}
			var pods bytes.Buffer
			for _, o := range r.byKind("Deployment") {
				var d struct {
					Spec struct {
						Template struct {
							Metadata map[string]any `yaml:"metadata"`
							Spec     map[string]any `yaml:"spec"`
						} `yaml:"template"`
					} `yaml:"spec"`
				}
				o.decode(t, &d)
				md := d.Spec.Template.Metadata
				if md == nil {
					md = map[string]any{}
				}
				md["name"], md["namespace"] = o.Metadata.Name, ns
				pod, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": d.Spec.Template.Spec})
				if err != nil {
					t.Fatal(err)
				}
				pods.WriteString("---\n")
				pods.Write(pod)
			}
			out, stderr, err := c.kubectl(pods.Bytes(), "create", "--dry-run=server", "-f", "-")
			if err != nil {
				t.Fatal(err)
			}
			if w := warnings(stderr); w != "" {
				t.Errorf("warnings:\n%s", w)
			}
			if n := strings.Count(out, "created (server dry run)"); n != len(r.byKind("Deployment")) {
				t.Errorf("%d pods admitted, want %d:\n%s", n, len(r.byKind("Deployment")), out)
			}
		})
	}
}

// istioctl analyze, offline, on each rendering: no finding of any level.
// Text output, because -o json exits 0 whatever it finds.
func TestIstioAnalyze(t *testing.T) {
	t.Run("finds-a-broken-rule", func(t *testing.T) {
		istioctl := needTool(t, "istioctl")
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		os.WriteFile(bad, []byte(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http:
    - route:
        - destination: {host: reviews, subset: v9}
`), 0o644)
		out, err := exec.Command(istioctl, "analyze", "--use-kube=false", "-A", bad).CombinedOutput()
		if err == nil || strings.Contains(string(out), "No validation issues found") {
			t.Fatalf("analyze passed a VirtualService naming a missing subset:\n%s", out)
		}
	})
	for _, tg := range allTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			istioctl := needTool(t, "istioctl")
			r := render(t, tg)
			cmd := exec.Command(istioctl, "analyze", "--use-kube=false", "-A", r.file)
			cmd.Env = append(cmd.Environ(), "KUBECONFIG="+r.file+".no-kubeconfig")
			out, err := cmd.CombinedOutput()
			text := string(out)
			if err != nil || !strings.Contains(text, "No validation issues found") {
				t.Errorf("istioctl analyze (exit %v):\n%s", err, text)
			}
		})
	}
}
