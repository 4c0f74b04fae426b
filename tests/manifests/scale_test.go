package manifests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The scale scenario (scale/, scripts/scale.sh) at the published size, 500
// namespaces x 100 ratings replicas, in every mode with its options on: run
// by the real kube-burner against the suite's API server, which stores and
// validates every object (no kubelet, so no pod starts), then the objects it
// holds are checked against scale/README.md's contract, the hardening policy,
// Pod Security "restricted" and `istioctl analyze`.
const (
	scaleNamespaces = 500
	scaleReplicas   = 100
	// kube-burner retries a refused create for minutes: bound each run.
	scaleRunTimeout = 3 * time.Minute
)

var scaleVariants = []struct {
	mode string
	args []string
}{
	{"no-mesh", nil},
	{"sidecar", []string{"--policy"}},
	{"ambient", []string{"--waypoint", "--policy"}},
}

// scaleRun runs scripts/scale.sh with the cached kube-burner against the
// suite's API server and returns its output and the uuid it printed.
func scaleRun(t *testing.T, c *apiServer, args ...string) (out, uuid string) {
	t.Helper()
	kb := needTool(t, "kube-burner")
	ctx, cancel := context.WithTimeout(context.Background(), scaleRunTimeout)
	defer cancel()
	full := append([]string{filepath.Join(repoRoot, "scripts", "scale.sh")}, args...)
	full = append(full, "--kubeconfig", c.kubeconfig, "--results", t.TempDir())
	cmd := exec.CommandContext(ctx, "bash", full...)
	cmd.Env = append(cmd.Environ(), "KUBE_BURNER="+kb)
	b, err := cmd.CombinedOutput()
	out = string(b)
	if err != nil {
		t.Fatalf("scale.sh %s: %v\n%s", strings.Join(args, " "), err, tail(out, 40))
	}
	m := regexp.MustCompile(`(?m)^==> scale: uuid (\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("scale.sh printed no uuid:\n%s", tail(out, 40))
	}
	return out, m[1]
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// kubeItems lists objects as generic maps, stripped of what the server adds.
func kubeItems(t *testing.T, c *apiServer, args ...string) []map[string]any {
	t.Helper()
	out, _, err := c.kubectl(nil, append([]string{"get", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, it := range list.Items {
		delete(it, "status")
		if md, ok := it["metadata"].(map[string]any); ok {
			for _, k := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation"} {
				delete(md, k)
			}
		}
	}
	return list.Items
}

func labelsOf(it map[string]any) map[string]string {
	out := map[string]string{}
	md, _ := it["metadata"].(map[string]any)
	ls, _ := md["labels"].(map[string]any)
	for k, v := range ls {
		out[k], _ = v.(string)
	}
	return out
}

func nameOf(it map[string]any) (ns, name string) {
	md, _ := it["metadata"].(map[string]any)
	ns, _ = md["namespace"].(string)
	name, _ = md["name"].(string)
	return ns, name
}

// asDeployment re-reads a generic object into the suite's typed view.
func asDeployment(t *testing.T, it map[string]any) deployment {
	t.Helper()
	b, err := yaml.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	var d deployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func multiDoc(t *testing.T, items []map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, it := range items {
		b, err := yaml.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.Bytes()
}

func TestScaleFullSize(t *testing.T) {
	c := cluster(t)
	for _, v := range scaleVariants {
		t.Run(v.mode, func(t *testing.T) {
			prefix := "scale-" + v.mode
			args := append([]string{"up", "--namespaces", strconv.Itoa(scaleNamespaces), "--replicas", strconv.Itoa(scaleReplicas),
				"--mode", v.mode, "--prefix", prefix, "--no-wait", "--qps", "1000", "--burst", "1000"}, v.args...)
			start := time.Now()
			_, uuid := scaleRun(t, c, args...)
			t.Logf("kube-burner created %d namespaces (%s) in %s", scaleNamespaces, strings.Join(args[5:], " "), time.Since(start).Round(100*time.Millisecond))
			sel := "kube-burner-uuid=" + uuid
			waypoint := strings.Contains(strings.Join(v.args, " "), "--waypoint")
			policy := strings.Contains(strings.Join(v.args, " "), "--policy")

			// Namespaces: the contract's names and labels, one per index.
			nss := kubeItems(t, c, "namespaces", "-l", sel)
			if len(nss) != scaleNamespaces {
				t.Fatalf("%d namespaces labelled %s, want %d", len(nss), sel, scaleNamespaces)
			}
			seen := map[string]bool{}
			want := map[string]string{"bookinfo-bench/scale": "true", "bookinfo-bench/scale-mode": v.mode}
			switch v.mode {
			case "no-mesh":
				want["istio-injection"], want["istio.io/dataplane-mode"] = "disabled", "none"
			case "sidecar":
				want["istio-injection"] = "enabled"
			case "ambient":
				want["istio.io/dataplane-mode"] = "ambient"
				if waypoint {
					want["istio.io/use-waypoint"] = "waypoint"
				}
			}
			for _, ns := range nss {
				_, name := nameOf(ns)
				seen[name] = true
				ls := labelsOf(ns)
				for k, val := range want {
					if ls[k] != val {
						t.Errorf("namespace %s: label %s=%q, want %q", name, k, ls[k], val)
					}
				}
				if v.mode != "ambient" && ls["istio.io/use-waypoint"] != "" {
					t.Errorf("namespace %s: istio.io/use-waypoint in mode %s", name, v.mode)
				}
			}
			for i := 0; i < scaleNamespaces; i++ {
				if !seen[fmt.Sprintf("%s-%d", prefix, i)] {
					t.Errorf("namespace %s-%d missing", prefix, i)
				}
			}

			// Objects: per namespace ratings + fortio Deployments and
			// Services, the waypoint and the policy when asked for.
			tag := baseTag(t)
			deps := kubeItems(t, c, "deployments", "-A", "-l", sel)
			count := map[string]int{}
			var sample []deployment
			var sampleItems []map[string]any
			for _, it := range deps {
				ns, name := nameOf(it)
				d := asDeployment(t, it)
				count[name]++
				if ns == prefix+"-0" {
					sample = append(sample, d)
					sampleItems = append(sampleItems, it)
				}
				spec, _ := it["spec"].(map[string]any)
				switch name {
				case "ratings":
					if r, _ := spec["replicas"].(float64); int(r) != scaleReplicas {
						t.Errorf("%s/ratings: replicas %v, want %d", ns, spec["replicas"], scaleReplicas)
					}
					if d.Spec.Template.Metadata.Labels["app"] != "ratings" {
						t.Errorf("%s/ratings: pod label app=%q", ns, d.Spec.Template.Metadata.Labels["app"])
					}
					if img := d.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/bookinfo-bench/bookinfo-bench/ratings:"+tag {
						t.Errorf("%s/ratings: image %s, want the overlays' tag %s", ns, img, tag)
					}
				case "fortio":
					c0 := d.Spec.Template.Spec.Containers[0]
					if got := strings.Join(c0.Args, " "); got != "agent --listen :8080 --data-dir /var/lib/fortio" {
						t.Errorf("%s/fortio: args %q", ns, got)
					}
					if c0.Image != "ghcr.io/bookinfo-bench/bookinfo-bench/bookload:"+tag {
						t.Errorf("%s/fortio: image %s, want the bookload image at the overlays' tag %s", ns, c0.Image, tag)
					}
					if d.Spec.Template.Metadata.Labels["app"] != "fortio" {
						t.Errorf("%s/fortio: pod label app=%q", ns, d.Spec.Template.Metadata.Labels["app"])
					}
				default:
					t.Errorf("%s: unexpected Deployment %s", ns, name)
				}
			}
			if count["ratings"] != scaleNamespaces || count["fortio"] != scaleNamespaces {
				t.Errorf("Deployments: %v, want ratings and fortio %d times each", count, scaleNamespaces)
			}
			svcs := kubeItems(t, c, "services", "-A", "-l", sel)
			ports := map[string]float64{}
			for _, it := range svcs {
				_, name := nameOf(it)
				spec, _ := it["spec"].(map[string]any)
				p, _ := spec["ports"].([]any)
				if len(p) == 1 {
					ports[name], _ = p[0].(map[string]any)["port"].(float64)
				}
			}
			if len(svcs) != 2*scaleNamespaces || ports["ratings"] != 9080 || ports["fortio"] != 8080 {
				t.Errorf("%d Services (want %d), ports %v (want ratings 9080, fortio 8080)", len(svcs), 2*scaleNamespaces, ports)
			}
			for kind, on := range map[string]bool{"gateways.gateway.networking.k8s.io": waypoint, "authorizationpolicies.security.istio.io": policy} {
				items := kubeItems(t, c, kind, "-A", "-l", sel)
				if n := len(items); on && n != scaleNamespaces || !on && n != 0 {
					t.Errorf("%d %s, want %d", n, kind, map[bool]int{true: scaleNamespaces}[on])
				}
				for _, it := range items {
					if !checkScaleMeshObject(t, v.mode, it) {
						break // the same template made the other 499
					}
				}
			}

			// The project's hardening, and Pod Security "restricted" decided
			// by the API server, on the pods these Deployments would start.
			if len(sample) != 2 {
				t.Fatalf("%d Deployments in %s-0, want 2", len(sample), prefix)
			}
			for _, d := range sample {
				t.Run("policy/"+d.Metadata.Name, func(t *testing.T) { checkDeployment(t, d) })
			}
			scalePodSecurity(t, c, sampleItems)

			if v.mode != "no-mesh" {
				scaleAnalyze(t, c, prefix, uuid)
			}
		})
	}
}

// checkScaleMeshObject: the waypoint is the one istiod deploys for a
// namespace's services, and the policy binds to ratings the way the mode
// enforces it (istioctl analyze, offline, flags neither a policy that
// selects nothing nor one naming a missing Service).
func checkScaleMeshObject(t *testing.T, mode string, it map[string]any) bool {
	t.Helper()
	ns, name := nameOf(it)
	b, _ := json.Marshal(it["spec"])
	var got string
	want := ""
	switch it["kind"] {
	case "Gateway":
		var g struct {
			Class     string `json:"gatewayClassName"`
			Listeners []struct {
				Port     int    `json:"port"`
				Protocol string `json:"protocol"`
			} `json:"listeners"`
		}
		json.Unmarshal(b, &g)
		got = fmt.Sprintf("%s %s %+v", name, g.Class, g.Listeners)
		want = "waypoint istio-waypoint [{Port:15008 Protocol:HBONE}]"
	case "AuthorizationPolicy":
		var p struct {
			Selector *struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			TargetRefs []struct{ Kind, Group, Name string } `json:"targetRefs"`
			Action     string                               `json:"action"`
			Rules      []struct {
				To []struct {
					Operation struct{ Methods, Paths []string } `json:"operation"`
				} `json:"to"`
			} `json:"rules"`
		}
		json.Unmarshal(b, &p)
		got = fmt.Sprintf("%s %v %+v %s %+v", name, p.Selector, p.TargetRefs, p.Action, p.Rules)
		if mode == "ambient" {
			want = "ratings-get <nil> [{Kind:Service Group: Name:ratings}] ALLOW [{To:[{Operation:{Methods:[GET] Paths:[/ratings/*]}}]}]"
		} else {
			want = "ratings-get &{map[app:ratings]} [] ALLOW [{To:[{Operation:{Methods:[GET] Paths:[/ratings/*]}}]}]"
		}
	}
	if got != want {
		t.Errorf("%s: %s\n got %s\nwant %s", ns, it["kind"], got, want)
		return false
	}
	return true
}

// scalePodSecurity creates (dry run) a Pod from each Deployment's template
// in a namespace enforcing "restricted".
func scalePodSecurity(t *testing.T, c *apiServer, deps []map[string]any) {
	t.Helper()
	const ns = "pss-scale"
	if _, _, err := c.kubectl([]byte(`apiVersion: v1
kind: Namespace
metadata:
  name: `+ns+`
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
`), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	var pods []map[string]any
	for _, it := range deps {
		_, name := nameOf(it)
		spec, _ := it["spec"].(map[string]any)
		tmpl, _ := spec["template"].(map[string]any)
		md, _ := tmpl["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
		}
		md["name"], md["namespace"] = name, ns
		pods = append(pods, map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": tmpl["spec"]})
	}
	out, stderr, err := c.kubectl(multiDoc(t, pods), "create", "--dry-run=server", "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	if w := warnings(stderr); w != "" {
		t.Errorf("Pod Security warnings:\n%s", w)
	}
	if n := strings.Count(out, "created (server dry run)"); n != len(pods) {
		t.Errorf("%d pods admitted under restricted, want %d:\n%s", n, len(pods), out)
	}
}

// scaleAnalyze runs `istioctl analyze` offline on what the API server holds
// for the first two and the last namespace (each namespace is the same but
// for its name; all 500 would only slow the analysis down).
func scaleAnalyze(t *testing.T, c *apiServer, prefix, uuid string) {
	t.Helper()
	istioctl := needTool(t, "istioctl")
	var items []map[string]any
	for _, i := range []int{0, 1, scaleNamespaces - 1} {
		ns := fmt.Sprintf("%s-%d", prefix, i)
		items = append(items, kubeItems(t, c, "namespaces", "-l", "kube-burner-uuid="+uuid+",kubernetes.io/metadata.name="+ns)...)
		items = append(items, kubeItems(t, c, "deployments,services,gateways.gateway.networking.k8s.io,authorizationpolicies.security.istio.io", "-n", ns)...)
	}
	file := filepath.Join(t.TempDir(), "scale.yaml")
	if err := os.WriteFile(file, multiDoc(t, items), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(istioctl, "analyze", "--use-kube=false", "-A", file)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+file+".no-kubeconfig")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No validation issues found") {
		t.Errorf("istioctl analyze on %d objects (exit %v):\n%s", len(items), err, out)
	}
}

// The churn jobs, run by kube-burner against the no-mesh set of
// TestScaleFullSize (created here when run alone), at a fast tick: each
// minute relabels one namespace and scales 59 random ratings Deployments, each
// to 85-115% of their replicas. Then `up` and churn in one run.
func TestScaleChurn(t *testing.T) {
	c := cluster(t)
	prefix := "scale-no-mesh"
	if _, _, err := c.kubectl(nil, "get", "namespace", prefix+"-0"); err != nil {
		scaleRun(t, c, "up", "--namespaces", strconv.Itoa(scaleNamespaces), "--replicas", strconv.Itoa(scaleReplicas),
			"--prefix", prefix, "--no-wait", "--qps", "1000", "--burst", "1000")
	}
	start := time.Now()
	out, _ := scaleRun(t, c, "churn", "--namespaces", strconv.Itoa(scaleNamespaces), "--replicas", strconv.Itoa(scaleReplicas),
		"--prefix", prefix, "--churn-duration", "1m", "--churn-tick", "10ms", "--qps", "1000", "--burst", "1000")
	t.Logf("one churn minute at a 10 ms tick took %s", time.Since(start).Round(100*time.Millisecond))
	if n := strings.Count(out, "Found 1 deployments with selector app=ratings,bookinfo-bench/scale-namespace="+prefix+"-"); n != 59 {
		t.Errorf("kube-burner selected a single ratings Deployment %d times, want 59:\n%s", n, tail(out, 20))
	}
	if n := strings.Count(out, "Found 1 namespaces with selector kubernetes.io/metadata.name="+prefix+"-"); n != 1 {
		t.Errorf("kube-burner selected a single namespace %d times, want 1", n)
	}
	if strings.Contains(out, "level=error") || strings.Contains(out, "level=fatal") {
		t.Errorf("kube-burner logged errors:\n%s", tail(out, 20))
	}

	out2, _, err := c.kubectl(nil, "get", "deployments", "-A", "-l", "app=ratings,bookinfo-bench/scale-namespace",
		"-o", `jsonpath={range .items[*]}{.metadata.namespace} {.spec.replicas} {.metadata.generation}{"\n"}{end}`)
	if err != nil {
		t.Fatal(err)
	}
	patched, values := 0, map[int]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out2), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !strings.HasPrefix(f[0], prefix+"-") {
			continue
		}
		r, _ := strconv.Atoi(f[1])
		g, _ := strconv.Atoi(f[2])
		if g > 1 {
			patched++
			values[r] = true
		}
		if r < scaleReplicas*85/100 || r > (scaleReplicas*115+99)/100 {
			t.Errorf("%s: ratings scaled to %d, outside 85-115%% of %d", f[0], r, scaleReplicas)
		}
	}
	// 59 draws among 500 namespaces hit about 56 different ones; a draw of
	// exactly 100 changes nothing. Fewer than 30 means no random pick.
	if patched < 30 || len(values) < 5 {
		t.Errorf("%d ratings Deployments changed, to %d different counts: want >= 30 and >= 5", patched, len(values))
	}
	relabelled, _, err := c.kubectl(nil, "get", "namespaces", "-l", "bookinfo-bench/relabel,bookinfo-bench/scale-mode=no-mesh", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(relabelled)); n != 1 {
		t.Errorf("%d namespaces relabelled after one churn minute, want 1", n)
	}

	t.Run("up-with-churn", func(t *testing.T) {
		out, uuid := scaleRun(t, c, "up", "--namespaces", "4", "--replicas", "7", "--prefix", "scale-both", "--mode", "sidecar",
			"--policy", "--no-wait", "--churn-duration", "120s", "--churn-tick", "5ms")
		if n := strings.Count(out, "Found 1 deployments with selector app=ratings,bookinfo-bench/scale-namespace=scale-both-"); n != 2*59 {
			t.Errorf("%d single-Deployment patches, want %d", n, 2*59)
		}
		reps, _, err := c.kubectl(nil, "get", "deployments", "-A", "-l", "app=ratings,kube-burner-uuid="+uuid, "-o", "jsonpath={.items[*].spec.replicas}")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range strings.Fields(reps) {
			if n, _ := strconv.Atoi(r); n < 5 || n > 9 { // floor(0.85*7), ceil(1.15*7)
				t.Errorf("ratings at %d replicas, want 5-9", n)
			}
		}

		// delete: kube-burner deletes the run's namespaces. Without a
		// namespace controller here they stay Terminating, and kube-burner
		// would wait for them for hours: it is stopped after a few seconds.
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot, "scripts", "scale.sh"), "delete", "--uuid", uuid,
			"--kubeconfig", c.kubeconfig, "--results", t.TempDir())
		cmd.Env = append(cmd.Environ(), "KUBE_BURNER="+needTool(t, "kube-burner"))
		cmd.Run()
		phases, _, err := c.kubectl(nil, "get", "namespaces", "-l", "kube-burner-uuid="+uuid, "-o", "jsonpath={.items[*].status.phase}")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Fields(phases); len(got) != 4 || strings.Count(phases, "Terminating") != 4 {
			t.Errorf("after delete: namespace phases %q, want 4 x Terminating", phases)
		}
		if other, _, _ := c.kubectl(nil, "get", "namespace", prefix+"-0", "-o", "jsonpath={.status.phase}"); other != "Active" {
			t.Errorf("delete of one uuid left %s-0 %q, want Active", prefix, other)
		}
	})
}

// Bad knobs fail before anything reaches a cluster, with exit status 2 and
// the flag and the value in the message.
func TestScaleBadKnobs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "--namespaces", "0"}, "--namespaces: want a whole number from 1 to 100000, got '0'"},
		{[]string{"up", "--namespaces", "ten"}, "--namespaces: want a whole number"},
		{[]string{"up", "--replicas", "-3"}, "--replicas: want a whole number from 1 to 10000, got '-3'"},
		{[]string{"up", "--replicas"}, "--replicas: missing value"},
		{[]string{"up", "--replicas", "2.5"}, "--replicas: want a whole number from 1 to 10000, got '2.5'"},
		{[]string{"up", "--mode", "mesh"}, "--mode: want no-mesh, sidecar or ambient, got 'mesh'"},
		{[]string{"up", "--mode", "sidecar", "--waypoint"}, "--waypoint: waypoints are for --mode ambient"},
		{[]string{"up", "--policy"}, "--policy: an AuthorizationPolicy needs a mesh"},
		{[]string{"up", "--mode", "ambient", "--policy"}, "--policy: in ambient an L7 rule needs --waypoint"},
		{[]string{"up", "--churn-duration", "90s"}, "--churn-duration: want 0 or whole minutes (5m, 1h, 120s), got '90s'"},
		{[]string{"up", "--churn-duration", "soon"}, "--churn-duration: want 0 or whole minutes"},
		{[]string{"churn"}, "--churn-duration: churn needs one"},
		{[]string{"up", "--churn-tick", "1"}, "--churn-tick: want a duration in ms or s"},
		{[]string{"up", "--qps", "0"}, "--qps: want a number above 0, got '0'"},
		{[]string{"up", "--qps", "fast"}, "--qps: want a number above 0, got 'fast'"},
		{[]string{"up", "--burst", "0"}, "--burst: want a whole number from 1 to 100000, got '0'"},
		{[]string{"up", "--prefix", "Scale_Test"}, "--prefix: want lower-case letters"},
		{[]string{"up", "--wait-timeout", "soon"}, "--wait-timeout: want a duration like 15m, got 'soon'"},
		{[]string{"up", "--prometheus-url", "prometheus:9090"}, "--prometheus-url: want http(s)://host:port"},
		{[]string{"up", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig: cannot read"},
		{[]string{"up", "--frobnicate"}, "unknown flag '--frobnicate'"},
		{[]string{"scale"}, "unknown command 'scale'"},
		{[]string{"delete"}, "delete: --uuid: missing"},
		{[]string{"down", "--uuid", "a b"}, "--uuid: want a label value"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot, "scripts", "scale.sh")}, tc.args...)...)
			// A kube-burner that fails loudly, should validation let a bad value through.
			cmd.Env = append(cmd.Environ(), "KUBE_BURNER=/bin/false")
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Errorf("exit %v, want status 2; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output %q does not say %q", strings.TrimSpace(string(out)), tc.want)
			}
		})
	}
}

// With --prometheus-url, kube-burner asks that Prometheus every query of
// scale/metrics.yml for the job's time range. A stand-in answers them with
// empty results and records what was asked.
func TestScalePrometheus(t *testing.T) {
	c := cluster(t)
	var mu sync.Mutex
	asked := map[string]bool{}
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		asked[r.Form.Get("query")] = true
		mu.Unlock()
		kind := "vector"
		if strings.HasSuffix(r.URL.Path, "/query_range") {
			kind = "matrix"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":%q,"result":[]}}`, kind)
	}))
	defer prom.Close()
	scaleRun(t, c, "up", "--namespaces", "2", "--replicas", "3", "--prefix", "scale-prom", "--no-wait", "--prometheus-url", prom.URL)

	data, err := os.ReadFile(filepath.Join(repoRoot, "scale", "metrics.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var profile []struct {
		Query      string `yaml:"query"`
		MetricName string `yaml:"metricName"`
	}
	if err := yaml.Unmarshal(data, &profile); err != nil || len(profile) == 0 {
		t.Fatalf("scale/metrics.yml: %v (%d queries)", err, len(profile))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, q := range profile {
		if !asked[q.Query] {
			t.Errorf("%s: query never sent to Prometheus: %s", q.MetricName, q.Query)
		}
	}
}
