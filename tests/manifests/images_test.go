package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// baseTag is the one tag overlays/base gives every app image.
func baseTag(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "overlays", "base", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			Name   string `yaml:"name"`
			NewTag string `yaml:"newTag"`
		} `yaml:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	tag := ""
	for _, i := range k.Images {
		if tag != "" && i.NewTag != tag {
			t.Fatalf("overlays/base tags differ (%s vs %s): one tag for every app", tag, i.NewTag)
		}
		tag = i.NewTag
	}
	if tag == "" {
		t.Fatal("overlays/base/kustomization.yaml sets no image tag")
	}
	return tag
}

// scripts/images.sh builds exactly the images the overlays deploy: one per
// apps/<name> folder (the base) and bookload (components/bookload-agent),
// with the base's tag.
func TestImagesScriptMatchesManifests(t *testing.T) {
	out, err := exec.Command("bash", filepath.Join(repoRoot, "scripts", "images.sh"), "--list").CombinedOutput()
	if err != nil {
		t.Fatalf("images.sh --list: %v\n%s", err, out)
	}
	built := strings.Fields(string(out))
	var deployed []string
	for _, tg := range append([]target{baseTarget()}, combinations(t)...) {
		for _, d := range render(t, tg).deployments(t) {
			for _, c := range d.Spec.Template.Spec.Containers {
				// Combinations with images from another registry deploy other names.
				if strings.HasPrefix(c.Image, publishedImage) && !slices.Contains(deployed, c.Image) {
					deployed = append(deployed, c.Image)
				}
			}
		}
	}
	slices.Sort(built)
	slices.Sort(deployed)
	if !slices.Equal(built, deployed) {
		t.Errorf("images.sh builds %v, the base deploys %v", built, deployed)
	}
}

// Shell scripts parse, and the CI workflows pin actions by commit and read
// the repository only.
func TestScriptsAndWorkflows(t *testing.T) {
	for _, s := range []string{"k8s-tools.sh", "images.sh", "kind-istio.sh"} {
		t.Run("bash-n/"+s, func(t *testing.T) {
			if out, err := exec.Command("bash", "-n", filepath.Join(repoRoot, "scripts", s)).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
	wfs, _ := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	if len(wfs) == 0 {
		t.Fatal("no workflows under .github/workflows")
	}
	uses := regexp.MustCompile(`(?m)^\s*(?:-\s*)?uses:\s*(\S+)`)
	pinned := regexp.MustCompile(`^[^@]+@[0-9a-f]{40}$`)
	for _, wf := range wfs {
		t.Run("workflow/"+filepath.Base(wf), func(t *testing.T) {
			data, err := os.ReadFile(wf)
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Permissions map[string]string `yaml:"permissions"`
				Jobs        map[string]any    `yaml:"jobs"`
			}
			if err := yaml.Unmarshal(data, &w); err != nil {
				t.Fatalf("not YAML: %v", err)
			}
			if len(w.Permissions) != 1 || w.Permissions["contents"] != "read" {
				t.Errorf("permissions %v: want exactly contents: read", w.Permissions)
			}
			if len(w.Jobs) == 0 {
				t.Error("no jobs")
			}
			for _, m := range uses.FindAllStringSubmatch(string(data), -1) {
				if !pinned.MatchString(m[1]) && !strings.HasPrefix(m[1], "./") {
					t.Errorf("action %s is not pinned by commit SHA", m[1])
				}
			}
		})
	}
}
