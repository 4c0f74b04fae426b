package manifests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Rules of the Istio docs' Bookinfo tasks that need versions this repo does
// not deploy (details v2, ratings v2 with a database).
var undeployedTutorials = []string{
	"virtual-service-details-v2.yaml",
	"virtual-service-ratings-db.yaml",
	"virtual-service-ratings-mysql.yaml",
	"virtual-service-ratings-mysql-vm.yaml",
}

// Each docs routing rule, added to every combination that enables
// bookinfo-routing, analyzes clean: every host, subset and version Service it
// names exists. The rules that need undeployed versions must be flagged,
// which shows the analysis can fail.
func TestIstioTutorials(t *testing.T) {
	istioctl := needTool(t, "istioctl")
	samples, _ := filepath.Glob(filepath.Join(toolsDir(), "istio-samples", "*", "*.yaml"))
	if len(samples) == 0 {
		t.Fatalf("no Istio samples in %s: %s", filepath.Join(toolsDir(), "istio-samples"), setupHint)
	}
	for _, tg := range combinations(t) {
		k := readKustomization(t, filepath.Join(tg.dir, "kustomization.yaml"))
		if !slices.Contains(k.Components, "../../components/bookinfo-routing") {
			continue
		}
		r := render(t, tg)
		for _, s := range samples {
			name := filepath.Base(s)
			t.Run(tg.name+"/"+filepath.Base(filepath.Dir(s))+"/"+name, func(t *testing.T) {
				rules, err := os.ReadFile(s)
				if err != nil {
					t.Fatal(err)
				}
				file := filepath.Join(t.TempDir(), "with-"+name)
				data := append(append(append([]byte{}, r.yaml...), "---\n"...), inNamespace(t, rules, k.Namespace)...)
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(istioctl, "analyze", "--use-kube=false", "-A", file).CombinedOutput()
				clean := err == nil && strings.Contains(string(out), "No validation issues found")
				switch {
				case slices.Contains(undeployedTutorials, name):
					if clean || !strings.Contains(string(out), "IST0101") {
						t.Errorf("%s needs a version that is not deployed, yet analyze found no missing reference:\n%s", name, out)
					}
				case !clean:
					t.Errorf("istioctl analyze with %s (exit %v):\n%s", name, err, out)
				}
			})
		}
	}
}

// inNamespace sets metadata.namespace on every document.
func inNamespace(t *testing.T, data []byte, ns string) []byte {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out bytes.Buffer
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if err.Error() == "EOF" {
				return out.Bytes()
			}
			t.Fatal(err)
		}
		if doc == nil {
			continue
		}
		md, _ := doc["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			doc["metadata"] = md
		}
		md["namespace"] = ns
		b, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
}
