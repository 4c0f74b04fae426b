package manifests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

const setupHint = "run `scripts/k8s-tools.sh` (or `make setup`) to build and cache it"

var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}()

// toolsDir is where scripts/k8s-tools.sh caches binaries and CRDs.
func toolsDir() string {
	if d := os.Getenv("BOOKINFO_TOOLS_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "bookinfo-bench-tools")
	}
	return filepath.Join(home, ".cache", "bookinfo-bench", "tools")
}

// cachedTool returns the path of a binary built by scripts/k8s-tools.sh.
func cachedTool(name string) (string, error) {
	p := filepath.Join(toolsDir(), "bin", name)
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is missing at %s: %s", name, p, setupHint)
	}
	return p, nil
}

// crdFiles returns the cached CRD manifests: Gateway API first, then Istio.
func crdFiles() ([]string, error) {
	var files []string
	for _, pattern := range []string{"gateway-api/*.yaml", "istio/*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(toolsDir(), "crds", pattern))
		if len(m) == 0 {
			return nil, fmt.Errorf("no CRDs at %s: %s", filepath.Join(toolsDir(), "crds", pattern), setupHint)
		}
		files = append(files, m...)
	}
	return files, nil
}

var kubectlPath = sync.OnceValues(func() (string, error) {
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return "", fmt.Errorf("kubectl (with its built-in kustomize) is not on PATH: install kubectl >= 1.30")
	}
	return p, nil
})

func needKubectl(t *testing.T) string {
	t.Helper()
	p, err := kubectlPath()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := cachedTool(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
