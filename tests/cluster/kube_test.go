//go:build cluster

package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// repo is the repository root (tests run in tests/cluster).
var repo = func() string {
	d, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return d
}()

var started = time.Now()

// phase prints how long a phase took, so a slow run shows where the time went.
func phase(name string, fn func() error) error {
	t0 := time.Now()
	fmt.Fprintf(os.Stderr, "=== phase %s\n", name)
	err := fn()
	status := "done"
	if err != nil {
		status = "FAILED: " + err.Error()
	}
	fmt.Fprintf(os.Stderr, "=== phase %s: %s in %.1fs (%.0fs since the start)\n",
		name, status, time.Since(t0).Seconds(), time.Since(started).Seconds())
	return err
}

// script runs scripts/NAME with its output on stderr.
func script(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(repo, "scripts", name)}, args...)...)
	cmd.Dir = repo
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scripts/%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// scriptOutput runs scripts/NAME and returns its standard output.
func scriptOutput(name string, args ...string) (string, error) {
	cmd := exec.Command("bash", append([]string{filepath.Join(repo, "scripts", name)}, args...)...)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("scripts/%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

var kubeconfig = func() string {
	if k := os.Getenv("BOOKINFO_CLUSTER_DIR"); k != "" {
		return filepath.Join(k, "etc", "admin.kubeconfig")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "bookinfo-bench", "cluster", "etc", "admin.kubeconfig")
}()

// kubectl runs kubectl against the test cluster, bounded in time.
func kubectl(args ...string) (string, error) {
	return kubectlIn(nil, args...)
}

func kubectlIn(stdin io.Reader, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Dir = repo
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := kubectl(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// variant is one namespace the suite deploys from an overlay, the way a user
// builds their own overlay on ours: a kustomization with its own namespace,
// here also enforcing Pod Security "restricted".
type variant struct {
	ns         string
	base       string   // overlays/... directory, relative to the repo
	components []string // overlays/components/... added to it
	// later are Deployments applied with 0 replicas, for the test to scale
	// up once the others run: on one node, the replicas component's load
	// client (required off details' nodes) would otherwise win the race for
	// the node as often as details does, and details would never schedule.
	later []string
}

var (
	tuned  = variant{ns: "bbt-tuned", base: "overlays/no-mesh"}
	legacy = variant{ns: "bbt-legacy", base: "overlays/no-mesh", components: []string{"overlays/components/legacy-http"}}
	repl   = variant{ns: "bbt-replicas", base: "overlays/no-mesh", components: []string{"overlays/components/replicas"}, later: []string{"fortio"}}
)

// apply writes the variant's kustomization into a temporary directory and
// applies it with kubectl apply -k.
func (v variant) apply() error {
	dir, err := os.MkdirTemp("", "bbt-kustomize-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rel := func(p string) string {
		r, err := filepath.Rel(dir, filepath.Join(repo, p))
		if err != nil {
			panic(err)
		}
		return r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - %s\n", v.ns, rel(v.base))
	if len(v.components) > 0 {
		b.WriteString("components:\n")
		for _, c := range v.components {
			fmt.Fprintf(&b, "  - %s\n", rel(c))
		}
	}
	b.WriteString(`patches:
  - target: {kind: Namespace}
    patch: |-
      - op: add
        path: /metadata/labels/pod-security.kubernetes.io~1enforce
        value: restricted
`)
	for _, d := range v.later {
		fmt.Fprintf(&b, "  - target: {kind: Deployment, name: %s}\n    patch: |-\n      - op: replace\n        path: /spec/replicas\n        value: 0\n", d)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	_, err = kubectl("apply", "-k", dir)
	return err
}

// deployments lists the variant's Deployments.
func (v variant) deployments() ([]string, error) {
	out, err := kubectl("-n", v.ns, "get", "deployments", "-o", "jsonpath={.items[*].metadata.name}")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// rollout waits until every Deployment of the variant (but skip) is rolled out.
func (v variant) rollout(timeout time.Duration, skip ...string) error {
	deps, err := v.deployments()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for _, d := range deps {
		if contains(skip, d) {
			continue
		}
		left := time.Until(deadline).Round(time.Second)
		if left < time.Second {
			left = time.Second
		}
		if _, err := kubectl("-n", v.ns, "rollout", "status", "deployment/"+d, "--timeout="+left.String()); err != nil {
			pods, _ := kubectl("-n", v.ns, "get", "pods", "-o", "wide")
			return fmt.Errorf("%s: %w\n%s", v.ns, err, pods)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pod is what the suite reads of a pod.
type pod struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		Phase             string `json:"phase"`
		PodIP             string `json:"podIP"`
		ContainerStatuses []struct {
			Name         string `json:"name"`
			Ready        bool   `json:"ready"`
			RestartCount int    `json:"restartCount"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

func (p pod) ready() bool {
	if p.Status.Phase != "Running" || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if !c.Ready {
			return false
		}
	}
	return true
}

func pods(ns, selector string) ([]pod, error) {
	args := []string{"-n", ns, "get", "pods", "-o", "json"}
	if selector != "" {
		args = append(args, "-l", selector)
	}
	out, err := kubectl(args...)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []pod `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("kubectl get pods -n %s: %w", ns, err)
	}
	return list.Items, nil
}

// portForward forwards a free local port to TARGET:PORT in NS until the test
// ends and returns the local port.
func portForward(t *testing.T, ns, target, port string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "-n", ns, "port-forward", target, ":"+port)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case p := <-found:
		return p
	case <-time.After(30 * time.Second):
		t.Fatalf("kubectl -n %s port-forward %s :%s: no port after 30 s: %s", ns, target, port, stderr.String())
	}
	return ""
}

// get fetches URL with a bounded client and returns status and body.
func get(client *http.Client, url string, header http.Header) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// eventually retries fn every 500 ms until it succeeds or the time is up
// (a new Service answers about a second after its pods are Ready).
func eventually(t *testing.T, within time.Duration, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	var err error
	for {
		if err = fn(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, within, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
