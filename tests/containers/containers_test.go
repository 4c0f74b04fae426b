// Package containers builds the four app images and bookload's, and runs them
// the way Kubernetes runs the rendered overlays/no-mesh manifest: the
// manifest's user, read-only root filesystem with an emptyDir at /tmp, no
// capabilities, no privilege escalation and the manifest's environment, the
// four services in one podman pod (one network namespace, as a pod's
// containers share). Then it checks what a user checks first: the Istio docs'
// curl from the ratings container, the page, every /health and /metrics; and
// the bookload agent (components/bookload-agent) loading details.
package containers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}()

// In one network namespace the services need ports of their own; the
// manifest's peers (details, reviews, ratings on 9080) become these.
var ports = map[string]int{"productpage": 9080, "details": 9081, "reviews": 9082, "ratings": 9083}

// The Deployments run: reviews v2, so the page shows ratings' stars.
var deployments = []struct{ name, app string }{
	{"ratings-v1", "ratings"}, {"details-v1", "details"}, {"reviews-v2", "reviews"}, {"productpage-v1", "productpage"},
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom any    `yaml:"valueFrom"`
	} `yaml:"env"`
	Lifecycle struct {
		PreStop struct {
			Exec struct {
				Command []string `yaml:"command"`
			} `yaml:"exec"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	SecurityContext struct {
		RunAsUser                *int64 `yaml:"runAsUser"`
		RunAsGroup               *int64 `yaml:"runAsGroup"`
		ReadOnlyRootFilesystem   bool   `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type deployment struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []container `yaml:"containers"`
				Volumes    []struct {
					Name     string `yaml:"name"`
					EmptyDir any    `yaml:"emptyDir"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// engine is the podman command line this machine needs (scripts/images.sh
// knows the flags), with a containers.conf whose default ulimits fit the
// host's hard limits: the pod's infra container takes no --ulimit flag.
type engine struct {
	cmd []string
	env []string
}

func (e engine) run(args ...string) (string, error) {
	c := exec.Command(e.cmd[0], append(e.cmd[1:], args...)...)
	c.Env = append(os.Environ(), e.env...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return out.String(), err
}

func newEngine(t *testing.T) engine {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(repoRoot, "scripts", "images.sh"), "--engine").CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/images.sh --engine: %v\n%s", err, out)
	}
	cmd := strings.Fields(string(out))
	if len(cmd) == 0 || cmd[0] != "podman" {
		t.Fatalf("the container test runs the services in a podman pod; this machine's engine is %q: install podman (Debian: apt-get install podman runc), or run `make setup`", strings.TrimSpace(string(out)))
	}
	flags, err := exec.Command("bash", filepath.Join(repoRoot, "scripts", "images.sh"), "--run-flags").Output()
	if err != nil {
		t.Fatal(err)
	}
	var limits []string
	for _, m := range regexp.MustCompile(`--ulimit (\S+)`).FindAllStringSubmatch(string(flags), -1) {
		limits = append(limits, strconv.Quote(m[1]))
	}
	conf := filepath.Join(t.TempDir(), "containers.conf")
	if err := os.WriteFile(conf, []byte("[containers]\ndefault_ulimits = ["+strings.Join(limits, ", ")+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return engine{cmd: cmd, env: []string{"CONTAINERS_CONF=" + conf}}
}

// render returns the Deployments of overlays/<overlay> by name.
func render(t *testing.T, overlay string) map[string]deployment {
	t.Helper()
	out, err := exec.Command("kubectl", "kustomize", filepath.Join(repoRoot, "overlays", overlay)).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize overlays/%s: %v", overlay, err)
	}
	deps := map[string]deployment{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var d deployment
		if err := dec.Decode(&d); err != nil {
			break
		}
		if d.Kind == "Deployment" {
			deps[d.Metadata.Name] = d
		}
	}
	return deps
}

func TestImagesRunAsKubernetesWould(t *testing.T) {
	e := newEngine(t)
	start := time.Now()
	build := exec.Command("bash", filepath.Join(repoRoot, "scripts", "images.sh"))
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("scripts/images.sh: %v", err)
	}
	t.Logf("images built in %v", time.Since(start).Round(time.Second))

	deps := render(t, "no-mesh")
	pod := fmt.Sprintf("bookinfo-containers-%d", os.Getpid())
	if out, err := e.run("pod", "create", "--name", pod, "--network", "none"); err != nil {
		t.Fatalf("podman pod create: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, d := range deployments {
				out, _ := e.run("logs", "--tail", "40", pod+"-"+d.app)
				t.Logf("%s log:\n%s", d.app, out)
			}
		}
		if out, err := e.run("pod", "rm", "--force", "--time", "5", pod); err != nil {
			t.Logf("podman pod rm: %v\n%s", err, out)
		}
	})
	// The peers' Service names resolve inside the pod as DNS does in the
	// cluster; the network namespace has loopback only.
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1 localhost productpage details reviews ratings\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, d := range deployments {
		dep, ok := deps[d.name]
		if !ok {
			t.Fatalf("overlays/no-mesh renders no Deployment %s", d.name)
		}
		c := dep.Spec.Template.Spec.Containers[0]
		args := []string{"run", "--detach", "--pod", pod, "--name", pod + "-" + d.app,
			"--read-only-tmpfs=false", "--security-opt", "no-new-privileges", "-v", hosts + ":/etc/hosts:ro"}
		sc := c.SecurityContext
		if sc.RunAsUser == nil || sc.RunAsGroup == nil || !sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Fatalf("%s: securityContext %+v is not the hardened one this test mirrors", d.name, sc)
		}
		args = append(args, "--user", fmt.Sprintf("%d:%d", *sc.RunAsUser, *sc.RunAsGroup), "--read-only", "--cap-drop", "ALL")
		for _, m := range c.VolumeMounts {
			// Mode 0777 without the sticky bit, as Kubernetes makes an
			// emptyDir (Ruby's Dir.tmpdir refuses such a directory).
			args = append(args, "--tmpfs", m.MountPath+":rw,nosuid,nodev,mode=0777")
		}
		env := map[string]string{}
		for _, v := range c.Env {
			if v.ValueFrom == nil {
				env[v.Name] = v.Value
			}
		}
		env["PORT"] = strconv.Itoa(ports[d.app])
		for _, peer := range []string{"details", "reviews", "ratings"} {
			env[strings.ToUpper(peer)+"_SERVICE_PORT"] = strconv.Itoa(ports[peer])
		}
		env["HOSTNAME"] = d.name + "-test"
		for k, v := range env {
			args = append(args, "--env", k+"="+v)
		}
		args = append(args, c.Image)
		if out, err := e.run(args...); err != nil {
			t.Fatalf("podman run %s: %v\n%s", d.app, err, out)
		}
		if cmd := c.Lifecycle.PreStop.Exec.Command; len(cmd) > 0 {
			if out, err := e.run(append([]string{"exec", pod + "-" + d.app}, cmd[0], "0")...); err != nil {
				t.Errorf("%s: the preStop command %v cannot run in the image: %v\n%s", d.app, cmd, err, out)
			}
		}
	}

	curl := func(args ...string) (string, error) {
		return e.run(append([]string{"exec", pod + "-ratings", "curl", "-sS", "--max-time", "5"}, args...)...)
	}
	deadline := time.Now().Add(4 * time.Minute)
	for _, d := range deployments {
		url := fmt.Sprintf("http://%s:%d/health", d.app, ports[d.app])
		for {
			out, err := curl("-o", "/dev/null", "-w", "%{http_code}", url)
			if err == nil && out == "200" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never answered 200 (last: %q, %v)", url, out, err)
			}
			time.Sleep(2 * time.Second)
		}
	}
	t.Logf("all four healthy %v after the build", time.Since(start).Round(time.Second))

	// The Istio docs' first check, as written there but for the port
	// (kubectl exec ... -c ratings -- curl -sS productpage:9080/productpage | grep -o "<title>.*</title>").
	page, err := curl("productpage:9080/productpage")
	if err != nil {
		t.Fatalf("curl productpage:9080/productpage from the ratings container: %v\n%s", err, page)
	}
	if title := regexp.MustCompile(`<title>.*</title>`).FindString(page); title != "<title>Simple Bookstore App</title>" {
		t.Errorf("the docs' check finds %q", title)
	}
	for _, want := range []string{"Book Details", "William Shakespeare", "Book Reviews", "Reviews served by:", "glyphicon glyphicon-star"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The ambient guide runs curl in reviews too:
	// kubectl exec deploy/reviews-v1 -- curl -s http://productpage:9080/productpage
	if out, err := e.run("exec", pod+"-reviews", "curl", "-sS", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}", "http://productpage:9080/productpage"); err != nil || out != "200" {
		t.Errorf("curl in the reviews container: %q, %v (the Istio docs' ambient guide runs it there)", out, err)
	}
	for _, d := range deployments {
		out, err := curl(fmt.Sprintf("http://%s:%d/metrics", d.app, ports[d.app]))
		if err != nil || !strings.Contains(out, "http_requests_total") || !strings.Contains(out, "http_request_duration_seconds_bucket") {
			t.Errorf("%s /metrics: %v\n%s", d.app, err, truncate(out, 400))
		}
		out, err = e.run("exec", pod+"-"+d.app, "id", "-u")
		if err != nil || strings.TrimSpace(out) != strconv.FormatInt(*deps[d.name].Spec.Template.Spec.Containers[0].SecurityContext.RunAsUser, 10) {
			t.Errorf("%s runs as user %q (%v), want the manifest's", d.app, strings.TrimSpace(out), err)
		}
	}

	// The load client of components/bookload-agent as its rendered Deployment
	// runs it, in the same pod (port 8080 is free there): fortio's UI, and one
	// repetition against details through the agent's run endpoint.
	agent, ok := render(t, "tests/ambient-bookload-agent")["fortio"]
	if !ok {
		t.Fatal("overlays/tests/ambient-bookload-agent renders no Deployment fortio")
	}
	c := agent.Spec.Template.Spec.Containers[0]
	sc := c.SecurityContext
	if sc.RunAsUser == nil || sc.RunAsGroup == nil || !sc.ReadOnlyRootFilesystem {
		t.Fatalf("fortio (bookload agent): securityContext %+v is not the hardened one this test mirrors", sc)
	}
	args := []string{"run", "--detach", "--pod", pod, "--name", pod + "-agent",
		"--read-only-tmpfs=false", "--security-opt", "no-new-privileges", "-v", hosts + ":/etc/hosts:ro",
		"--user", fmt.Sprintf("%d:%d", *sc.RunAsUser, *sc.RunAsGroup), "--read-only", "--cap-drop", "ALL"}
	for _, m := range c.VolumeMounts {
		args = append(args, "--tmpfs", m.MountPath+":rw,nosuid,nodev,mode=1777")
	}
	args = append(append(args, c.Image), c.Args...)
	if out, err := e.run(args...); err != nil {
		t.Fatalf("podman run the bookload agent: %v\n%s", err, out)
	}
	for {
		out, err := curl("-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:8080/bookload/v1/status")
		if err == nil && out == "200" {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := e.run("logs", "--tail", "40", pod+"-agent")
			t.Fatalf("the bookload agent never answered (last: %q, %v); its log:\n%s", out, err, logs)
		}
		time.Sleep(time.Second)
	}
	if out, err := curl("-o", "/dev/null", "-w", "%{http_code} %{content_type}", "http://127.0.0.1:8080/fortio/"); err != nil || !strings.HasPrefix(out, "200 text/html") {
		t.Errorf("fortio's UI from the agent: %q %v", out, err)
	}
	body := fmt.Sprintf(`{"scenario":{"name":"containers","path":"/details/0","timeout":"2s","keepalive":true},`+
		`"profile":{"name":"p","qps":20,"connections":2,"duration":"1s"},"target":{"name":"details","url":"http://details:%d"},"repetition":1}`, ports["details"])
	out, err := curl("-X", "POST", "-H", "Content-Type: application/json", "--data", body, "http://127.0.0.1:8080/bookload/v1/run")
	var doc struct {
		Bookload struct {
			Requests int64            `yaml:"requests"`
			Codes    map[string]int64 `yaml:"codes"`
			Latency  struct {
				Corrected struct {
					Histogram string `yaml:"hdr_histogram_us"`
				} `yaml:"corrected"`
			} `yaml:"latency"`
		} `yaml:"bookload"`
	}
	if err != nil || yaml.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("a run through the agent: %v\n%s", err, truncate(out, 400))
	}
	if b := doc.Bookload; b.Requests < 15 || b.Codes["200"] != b.Requests || b.Latency.Corrected.Histogram == "" {
		t.Errorf("a run through the agent: %d requests, codes %v, corrected histogram %d bytes; want ~20, all 200", b.Requests, b.Codes, len(b.Latency.Corrected.Histogram))
	}
	if out, err := e.run("exec", pod+"-agent", "id", "-u"); err != nil || strings.TrimSpace(out) != strconv.FormatInt(*sc.RunAsUser, 10) {
		t.Errorf("the bookload agent runs as user %q (%v), want the manifest's", strings.TrimSpace(out), err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
