package manifests

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The project's kustomize rules (overlays/README.md), on every kustomization
// under overlays/: patches only, labels without selectors, namespace only in
// the top-level variants.
func TestKustomizeConventions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "overlays", "*", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(repoRoot, "overlays", "*", "*", "kustomization.yaml"))
	files = append(files, more...)
	for _, f := range files {
		rel, _ := filepath.Rel(filepath.Join(repoRoot, "overlays"), f)
		dir := filepath.Dir(rel)
		t.Run(dir, func(t *testing.T) {
			k := readKustomization(t, f)
			for _, old := range []string{"patchesStrategicMerge", "patchesJson6902", "commonLabels", "bases", "vars"} {
				if _, ok := k.Raw[old]; ok {
					t.Errorf("%s: %q is deprecated: use patches: / labels: / resources:", rel, old)
				}
			}
			for _, l := range k.Labels {
				if l.IncludeSelectors == nil || *l.IncludeSelectors {
					t.Errorf("%s: labels %v without includeSelectors: false (selectors are immutable)", rel, l.Pairs)
				}
			}
			top := !strings.Contains(dir, string(filepath.Separator)) || strings.HasPrefix(dir, "tests"+string(filepath.Separator))
			isComponent := strings.HasPrefix(dir, "components"+string(filepath.Separator))
			if k.Namespace != "" && (!top || dir == "base") {
				t.Errorf("%s: namespace: belongs only in the top-level variants", rel)
			}
			if isComponent && k.Kind != "Component" {
				t.Errorf("%s: kind %q: a component is kind: Component", rel, k.Kind)
			}
			if !isComponent && k.Kind != "Kustomization" {
				t.Errorf("%s: kind %q: want Kustomization", rel, k.Kind)
			}
			if isComponent || dir == "base" {
				if _, err := os.Stat(filepath.Join(filepath.Dir(f), "README.md")); err != nil {
					t.Errorf("%s has no README.md saying what it is and what it changes", dir)
				}
			}
		})
	}
	t.Run("README", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(repoRoot, "overlays", "README.md")); err != nil {
			t.Error("overlays/README.md is missing")
		}
	})
	t.Run("no-containers-index", func(t *testing.T) {
		err := filepath.WalkDir(filepath.Join(repoRoot, "overlays"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(data), "containers/0") {
				t.Errorf("%s patches containers/0: select the container by name", p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// Every component is exercised by at least one combination, and each
// combination sets the namespace of the variant it builds on.
func TestCombinationsCoverComponents(t *testing.T) {
	comps, _ := filepath.Glob(filepath.Join(repoRoot, "overlays", "components", "*", "kustomization.yaml"))
	if len(comps) == 0 {
		t.Fatal("no components under overlays/components")
	}
	used := map[string]bool{}
	for _, tg := range combinations(t) {
		k := readKustomization(t, filepath.Join(tg.dir, "kustomization.yaml"))
		if tg.variant == "" {
			t.Errorf("%s: resources name no variant (../../<variant>)", tg.name)
			continue
		}
		v := readKustomization(t, filepath.Join(repoRoot, "overlays", tg.variant, "kustomization.yaml"))
		if k.Namespace != v.Namespace {
			t.Errorf("%s: namespace %q, but variant %s uses %q", tg.name, k.Namespace, tg.variant, v.Namespace)
		}
		if len(k.Components) == 0 {
			t.Errorf("%s: no components", tg.name)
		}
		for _, c := range k.Components {
			used[filepath.Base(c)] = true
		}
	}
	for _, c := range comps {
		name := filepath.Base(filepath.Dir(c))
		if !used[name] {
			t.Errorf("component %s is used by no combination under overlays/tests/", name)
		}
	}
}
