package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// actionlint (built by scripts/k8s-tools.sh) over every workflow: no finding
// of any kind. Its shellcheck integration, which checks each `run:` script,
// is on when shellcheck is on PATH (GitHub's runners have it) and off
// otherwise; the test log says which. pyflakes (Python `run:` steps) is off:
// no workflow here has one.
func TestActionlint(t *testing.T) {
	actionlint := needTool(t, "actionlint")
	args := []string{"-no-color", "-pyflakes="}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		args = append(args, "-shellcheck="+sc)
		t.Logf("actionlint: shellcheck integration on (%s)", sc)
	} else {
		args = append(args, "-shellcheck=")
		t.Log("actionlint: shellcheck integration off (shellcheck is not on PATH)")
	}
	lint := func(dir string, files ...string) (string, error) {
		cmd := exec.Command(actionlint, append(args, files...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	t.Run("finds-a-broken-workflow", func(t *testing.T) {
		dir := t.TempDir()
		wf := filepath.Join(dir, ".github", "workflows", "broken.yml")
		os.MkdirAll(filepath.Dir(wf), 0o755)
		os.WriteFile(wf, []byte(`name: broken
on: push
jobs:
  a:
    runs-on: ubuntu-24.04
    needs: no-such-job
    steps:
      - run: echo "${{ github.no_such_property }}"
`), 0o644)
		out, err := lint(dir, wf)
		if err == nil || !strings.Contains(out, "no-such-job") {
			t.Fatalf("actionlint passed a job needing a missing job (exit %v):\n%s", err, out)
		}
	})

	wfs, _ := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.y*ml"))
	if len(wfs) == 0 {
		t.Fatal("no workflows under .github/workflows")
	}
	for _, wf := range wfs {
		t.Run(filepath.Base(wf), func(t *testing.T) {
			out, err := lint(repoRoot, wf)
			if err != nil || strings.TrimSpace(out) != "" {
				t.Errorf("actionlint %s (exit %v):\n%s", filepath.Base(wf), err, out)
			}
		})
	}
}
