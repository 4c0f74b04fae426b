package manifests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// target is one directory `kubectl apply -k` is pointed at.
type target struct {
	name    string // "ambient", "tests/ambient-waypoint"
	dir     string // absolute
	variant string // the variant it deploys: "ambient"; "" for base
}

// variants returns overlays/*/ with a kustomization, base excluded: the
// directories a user applies.
func variants(t *testing.T) []target {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(repoRoot, "overlays", "*", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []target
	for _, f := range m {
		name := filepath.Base(filepath.Dir(f))
		if name == "base" {
			continue
		}
		out = append(out, target{name: name, dir: filepath.Dir(f), variant: name})
	}
	if len(out) == 0 {
		t.Fatal("no variants found under overlays/*/kustomization.yaml")
	}
	return out
}

// combinations returns overlays/tests/*/: a variant plus components. The
// variant is the one its resources list names.
func combinations(t *testing.T) []target {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(repoRoot, "overlays", "tests", "*", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("no combinations found under overlays/tests/*/kustomization.yaml")
	}
	var out []target
	for _, f := range m {
		k := readKustomization(t, f)
		variant := ""
		for _, r := range k.Resources {
			if strings.HasPrefix(r, "../../") && !strings.Contains(r[len("../../"):], "/") {
				variant = r[len("../../"):]
			}
		}
		out = append(out, target{name: "tests/" + filepath.Base(filepath.Dir(f)), dir: filepath.Dir(f), variant: variant})
	}
	return out
}

// allTargets is every variant, then every combination.
func allTargets(t *testing.T) []target {
	return append(variants(t), combinations(t)...)
}

func baseTarget() target {
	return target{name: "base", dir: filepath.Join(repoRoot, "overlays", "base")}
}

// object is one rendered manifest: its header decoded, the rest kept as a
// node for typed decoding.
type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   meta   `yaml:"metadata"`
	node       *yaml.Node
}

type meta struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func (o object) id() string { return o.Kind + "/" + o.Metadata.Name }

func (o object) decode(t *testing.T, v any) {
	t.Helper()
	if err := o.node.Decode(v); err != nil {
		t.Fatalf("%s: %v", o.id(), err)
	}
}

type rendering struct {
	yaml    []byte
	file    string // the rendering written to a temp file, for kubectl and istioctl
	objects []object
	err     error
}

var (
	renderMu    sync.Mutex
	renderCache = map[string]*rendering{}
	renderDir   string
)

// render runs `kubectl kustomize` on a target once per test binary.
func render(t *testing.T, tg target) *rendering {
	t.Helper()
	kubectl := needKubectl(t)
	renderMu.Lock()
	defer renderMu.Unlock()
	if r, ok := renderCache[tg.dir]; ok {
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r
	}
	r := &rendering{}
	renderCache[tg.dir] = r
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kubectl, "kustomize", tg.dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.err = fmt.Errorf("kubectl kustomize %s: %w\n%s", tg.name, err, stderr.String())
		t.Fatal(r.err)
	}
	r.yaml = out
	if r.objects, r.err = parseObjects(out); r.err != nil {
		r.err = fmt.Errorf("%s: %w", tg.name, r.err)
		t.Fatal(r.err)
	}
	if renderDir == "" {
		if renderDir, r.err = os.MkdirTemp("", "bookinfo-manifests-"); r.err != nil {
			t.Fatal(r.err)
		}
	}
	r.file = filepath.Join(renderDir, strings.ReplaceAll(tg.name, "/", "_")+".yaml")
	if r.err = os.WriteFile(r.file, out, 0o644); r.err != nil {
		t.Fatal(r.err)
	}
	return r
}

func parseObjects(data []byte) ([]object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []object
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return nil, err
		}
		var o object
		if err := n.Decode(&o); err != nil {
			return nil, err
		}
		if o.Kind == "" {
			continue
		}
		o.node = &n
		out = append(out, o)
	}
}

func (r *rendering) byKind(kind string) []object {
	var out []object
	for _, o := range r.objects {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func (r *rendering) find(kind, name string) (object, bool) {
	for _, o := range r.objects {
		if o.Kind == kind && o.Metadata.Name == name {
			return o, true
		}
	}
	return object{}, false
}

func (r *rendering) deployments(t *testing.T) map[string]deployment {
	t.Helper()
	out := map[string]deployment{}
	for _, o := range r.byKind("Deployment") {
		var d deployment
		o.decode(t, &d)
		out[o.Metadata.Name] = d
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// kustomization is the part of a kustomization.yaml the conventions check.
type kustomization struct {
	Kind       string         `yaml:"kind"`
	Namespace  string         `yaml:"namespace"`
	Resources  []string       `yaml:"resources"`
	Components []string       `yaml:"components"`
	Labels     []labelsEntry  `yaml:"labels"`
	Raw        map[string]any `yaml:",inline"`
}

type labelsEntry struct {
	Pairs            map[string]string `yaml:"pairs"`
	IncludeSelectors *bool             `yaml:"includeSelectors"`
}

func readKustomization(t *testing.T, path string) kustomization {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return k
}

func TestRender(t *testing.T) {
	for _, tg := range append([]target{baseTarget()}, allTargets(t)...) {
		t.Run(tg.name, func(t *testing.T) {
			r := render(t, tg)
			if len(r.byKind("Deployment")) == 0 {
				t.Fatalf("%s renders no Deployment", tg.name)
			}
			seen := map[string]bool{}
			for _, o := range r.objects {
				key := o.Metadata.Namespace + "/" + o.id()
				if seen[key] {
					t.Errorf("%s rendered twice", key)
				}
				seen[key] = true
			}
		})
	}
}
