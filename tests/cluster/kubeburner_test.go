//go:build cluster

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The scale scenario, small: kube-burner (scripts/scale.sh) creates
// scaleNamespaces namespaces of ratings x scaleReplicas and a bookload agent
// each, then churns them for a minute (a random ratings Deployment rescaled
// every second, a namespace relabelled) while `bookload scale` drives every
// namespace's agent at once through the API server's service proxy. The
// merged table and the cluster's cost (queries per core, from the kubelet
// summary API) come out, a repetition's request count is the sum of its
// namespaces', and `delete` leaves none of the run's namespaces behind.
//
// This file sorts before main_test.go, so it runs before the cluster goes
// down.
const (
	scaleNamespaces = 4
	scaleReplicas   = 3
	scalePrefix     = "bb-scale-test"
)

func TestScaleSmallRunWithChurn(t *testing.T) {
	dir := t.TempDir()
	uuid := fmt.Sprintf("bookinfo-cluster-test-%d", time.Now().Unix())
	knobs := []string{"--namespaces", strconv.Itoa(scaleNamespaces), "--replicas", strconv.Itoa(scaleReplicas),
		"--prefix", scalePrefix, "--mode", "no-mesh", "--kubeconfig", kubeconfig, "--uuid", uuid}

	t.Cleanup(func() {
		if keep {
			t.Logf("scale namespaces left up: scripts/scale.sh delete --uuid %s", uuid)
			return
		}
		_, _ = scaleScript(context.Background(), t, filepath.Join(dir, "delete"), "delete", "--uuid", uuid, "--kubeconfig", kubeconfig)
	})

	scenario := filepath.Join(dir, "scale-small.yaml")
	if err := os.WriteFile(scenario, []byte(`name: scale-small
description: every scale namespace at once through its own agent, while kube-burner churns
service: ratings
path: /ratings/0
warmup: 5s
repetitions: 3
timeout: 3s
keepalive: true
uniform: true
headers: {}
profiles:
  - {name: 10rps-2c, qps: 10, connections: 2, duration: 20s}
`), 0o644); err != nil {
		t.Fatal(err)
	}

	// The README's one command: up, then a minute of churn while bookload
	// loads every namespace (a 5 s warmup and three 20 s windows); --keep
	// leaves the namespaces for the checks below.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	kb := filepath.Join(dir, "kube-burner")
	out, err := scaleScript(ctx, t, kb, append([]string{"run", "--churn-duration", "1m", "--wait-timeout", "8m",
		"--scenario", scenario, "--out", dir, "--keep"}, knobs...)...)
	if err != nil {
		t.Fatalf("scale.sh run: %v", err)
	}
	t.Logf("scale.sh run (%d namespaces x %d ratings + 1 agent, a minute of churn) in %s",
		scaleNamespaces, scaleReplicas, time.Since(start).Round(time.Second))
	if podLatency, _ := filepath.Glob(filepath.Join(kb, "up", "metrics", "*odLatency*")); len(podLatency) == 0 {
		t.Errorf("kube-burner wrote no podLatency measurement under %s", filepath.Join(kb, "up", "metrics"))
	}

	for _, want := range []string{"### Scale: all namespaces together", "### Spread between namespaces", "queries per core"} {
		if !strings.Contains(out, want) {
			t.Errorf("bookload scale printed no %q", want)
		}
	}
	reps := scaleReps(t, dir)
	if len(reps) != 3 {
		t.Fatalf("%d repetitions stored, want 3", len(reps))
	}
	for _, r := range reps {
		md := r.Bookload.EngineMetadata
		var sum int64
		for _, m := range md.Namespaces {
			if !strings.HasPrefix(m.Name, scalePrefix+"-") {
				t.Errorf("rep %d: member %q is not one of the run's namespaces", r.Bookload.Repetition, m.Name)
			}
			sum += m.Requests
		}
		if md.Members != scaleNamespaces || len(md.Namespaces) != scaleNamespaces {
			t.Errorf("rep %d: %d members (%d listed), want %d", r.Bookload.Repetition, md.Members, len(md.Namespaces), scaleNamespaces)
		}
		if sum != r.Bookload.Requests {
			t.Errorf("rep %d: %d requests merged, but the namespaces' add up to %d", r.Bookload.Repetition, r.Bookload.Requests, sum)
		}
		// 4 namespaces x 10 RPS x 20 s; a window may lose a little to start-up.
		if want := int64(scaleNamespaces * 10 * 20); r.Bookload.Requests < want*9/10 {
			t.Errorf("rep %d: %d requests, want about %d", r.Bookload.Repetition, r.Bookload.Requests, want)
		}
		// A ratings pod the churn removes drains first (preStop, then the
		// app's own drain), as in a rollout.
		if r.Bookload.Errors != 0 {
			t.Errorf("rep %d: %d of %d requests failed while the churn rescaled ratings (codes %v)",
				r.Bookload.Repetition, r.Bookload.Errors, r.Bookload.Requests, r.Bookload.Codes)
		}
		c := md.ClusterCost
		if c.Source == "" || c.Samples < 2 || c.Groups["apps"].CPUSeconds <= 0 || c.Groups["clients"].CPUSeconds <= 0 {
			t.Errorf("rep %d: cluster cost missing or empty: %+v", r.Bookload.Repetition, c)
		}
		if c.MeshCPUSeconds != 0 || string(c.QueriesPerMeshCore) != `"n/a"` {
			t.Errorf("rep %d: no mesh here, but mesh CPU %.3f s, queries per mesh core %s", r.Bookload.Repetition, c.MeshCPUSeconds, c.QueriesPerMeshCore)
		}
		qpc, err := strconv.ParseFloat(string(c.QueriesPerCore), 64)
		if err != nil || qpc <= 0 {
			t.Errorf("rep %d: queries per core %s, want a number above 0", r.Bookload.Repetition, c.QueriesPerCore)
		}
		t.Logf("rep %d: %d requests from %d namespaces, merged p99 %.2f ms (corrected %.2f), apps %.2f CPU-s, clients %.2f CPU-s, %s queries per core",
			r.Bookload.Repetition, r.Bookload.Requests, md.Members, r.Bookload.Latency.Plain.SummaryMS.P99,
			r.Bookload.Latency.Corrected.SummaryMS.P99, c.Groups["apps"].CPUSeconds, c.Groups["clients"].CPUSeconds, c.QueriesPerCore)
	}

	// The churn really changed replica counts, within their bounds.
	counts := mustKubectl(t, "get", "deployments", "-A", "-l", "app=ratings,kube-burner-uuid="+uuid,
		"-o", "jsonpath={range .items[*]}{.metadata.generation} {.spec.replicas}{\"\\n\"}{end}")
	churned := 0
	for _, line := range strings.Split(strings.TrimSpace(counts), "\n") {
		var gen, n int
		if _, err := fmt.Sscan(line, &gen, &n); err != nil {
			t.Fatalf("deployments: %q: %v", line, err)
		}
		if gen > 1 {
			churned++
		}
		if n < 2 || n > 4 { // 85-115% of 3, rounded outwards
			t.Errorf("a ratings Deployment at %d replicas, want 2-4", n)
		}
	}
	if churned == 0 {
		t.Errorf("no ratings Deployment was rescaled by the churn:\n%s", counts)
	}

	// Everything goes with the run's uuid.
	if _, err := scaleScript(ctx, t, filepath.Join(dir, "delete"), "delete", "--uuid", uuid, "--kubeconfig", kubeconfig); err != nil {
		t.Fatalf("scale.sh delete: %v", err)
	}
	eventually(t, 5*time.Minute, "the run's namespaces gone", func() error {
		left, err := kubectl("get", "namespaces", "-l", "kube-burner-uuid="+uuid, "-o", "name")
		if err == nil && strings.TrimSpace(left) != "" {
			err = fmt.Errorf("still there:\n%s", left)
		}
		return err
	})
	t.Logf("scale run, churn and delete in %s", time.Since(start).Round(time.Second))
}

// scaleScript runs scripts/scale.sh with its results (kube-burner's log and
// measurements) in dir and returns its output (stdout and stderr); the
// output's tail goes to the test log.
func scaleScript(ctx context.Context, t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", append([]string{repo + "/scripts/scale.sh"}, append(args, "--results", dir)...)...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := cmd.CombinedOutput()
	// kube-burner's own log lines (time=...) are in the run's results.
	var ours []string
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "time=") {
			ours = append(ours, l)
		}
	}
	t.Logf("scale.sh %s (kube-burner's log: %s):\n%s", args[0], dir, lastLines(strings.Join(ours, "\n"), 60))
	return string(out), err
}

// lastLines is the tail of a command's output, enough to see why it failed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// scaleRep is what the test reads of a stored repetition of a scale run.
type scaleRep struct {
	Bookload struct {
		Repetition int              `json:"repetition"`
		Requests   int64            `json:"requests"`
		Errors     int64            `json:"errors"`
		Codes      map[string]int64 `json:"codes"`
		Latency    struct {
			Plain, Corrected struct {
				SummaryMS struct {
					P99 float64 `json:"p99"`
				} `json:"summary_ms"`
			}
		} `json:"latency"`
		EngineMetadata struct {
			Members    int `json:"members"`
			Namespaces []struct {
				Name     string `json:"namespace"`
				Requests int64  `json:"requests"`
			} `json:"namespaces"`
			ClusterCost struct {
				Source         string  `json:"source"`
				Samples        int     `json:"samples"`
				MeshCPUSeconds float64 `json:"mesh_cpu_seconds"`
				Groups         map[string]struct {
					CPUSeconds float64 `json:"cpu_seconds"`
				} `json:"groups"`
				QueriesPerMeshCore json.RawMessage `json:"queries_per_mesh_core"`
				QueriesPerCore     json.RawMessage `json:"queries_per_core"`
			} `json:"cluster_cost"`
		} `json:"engine_metadata"`
	} `json:"bookload"`
}

var repFile = regexp.MustCompile(`rep-\d+\.json$`)

// scaleReps reads the repetitions of the one run directory under dir.
func scaleReps(t *testing.T, dir string) []scaleRep {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(dir, "*_scale-small", "run.json"))
	if len(runs) != 1 {
		t.Fatalf("want one scale-small run under %s, found %v", dir, runs)
	}
	var reps []scaleRep
	err := filepath.Walk(filepath.Dir(runs[0]), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !repFile.MatchString(p) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var r scaleRep
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		reps = append(reps, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reps
}
