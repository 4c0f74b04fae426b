package manifests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scripts/mesh-compare.sh against the test API server: its argument checks,
// and its data-path checks on namespaces and pods made here. Nothing runs
// pods here, so the pods' status (ready or not) is written through the status
// subresource, and istioctl is a stand-in printing a ztunnel workload table.
func TestMeshCompareScript(t *testing.T) {
	c := cluster(t)
	const istioNS = "mc-istio"
	if _, _, err := c.kubectl([]byte(meshCompareFixtures), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	// Native sidecar (initContainer, restartPolicy Always) and a classic one,
	// both ready; in mc-sidecar-pending the sidecar never started.
	ready := `{"name":"istio-proxy","ready":true,"started":true,"restartCount":0,"image":"proxyv2","imageID":"","state":{"running":{}}}`
	app := `{"name":"app","ready":true,"started":true,"restartCount":0,"image":"app","imageID":"","state":{"running":{}}}`
	for _, p := range []struct{ ns, pod, status string }{
		{"mc-sidecar-ok", "native", `{"status":{"phase":"Running","initContainerStatuses":[` + ready + `],"containerStatuses":[` + app + `]}}`},
		{"mc-sidecar-ok", "classic", `{"status":{"phase":"Running","containerStatuses":[` + app + `,` + ready + `]}}`},
	} {
		if _, _, err := c.kubectl(nil, "-n", p.ns, "patch", "pod", p.pod, "--subresource=status", "--type=merge", "-p", p.status); err != nil {
			t.Fatal(err)
		}
	}

	// A stand-in istioctl: records its arguments, prints $FAKE_ZTUNNEL.
	dir := t.TempDir()
	istioctl := filepath.Join(dir, "istioctl")
	os.WriteFile(istioctl, []byte("#!/bin/sh\necho \"$@\" >>\"$FAKE_ISTIOCTL_ARGS\"\ncat \"$FAKE_ZTUNNEL\"\n"), 0o755)
	ztunnel := func(t *testing.T, rows ...string) string {
		f := filepath.Join(t.TempDir(), "ztunnel.txt")
		table := "NAMESPACE    POD NAME    ADDRESS    NODE    WAYPOINT    PROTOCOL\n" + strings.Join(rows, "\n") + "\n"
		os.WriteFile(f, []byte(table), 0o644)
		return f
	}
	allHBONE := []string{
		"mc-ambient   one   10.244.1.5   worker   None   HBONE",
		"mc-ambient   two   10.244.1.6   worker   None   HBONE",
		"mc-waypoint  wp-app  10.244.1.7 worker   waypoint   HBONE",
		"mc-plain     plain   10.244.1.8 worker   None   TCP",
		"mc-waypoint-missing  wp-app  10.244.1.9 worker  None  HBONE",
	}

	type run struct {
		out  string
		code int
		tmp  string
	}
	script := func(t *testing.T, env []string, args ...string) run {
		t.Helper()
		tmp := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(repoRoot, "scripts", "mesh-compare.sh")}, args...)...)
		cmd.Env = append(os.Environ(),
			"KUBECONFIG="+c.kubeconfig, "KUBECACHEDIR="+filepath.Join(c.dir, "kube-cache"),
			"TMPDIR="+tmp, "ISTIOCTL="+istioctl, "ISTIO_NAMESPACE="+istioNS,
			"FAKE_ISTIOCTL_ARGS="+filepath.Join(tmp, "istioctl-args"),
			"FAKE_ZTUNNEL="+ztunnel(t, allHBONE...),
			// Never built here: the runs that get this far must fail before it.
			"BOOKLOAD=/bin/false", "ROLLOUT_TIMEOUT=5s")
		cmd.Env = append(cmd.Env, env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("mesh-compare.sh %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		if ctx.Err() != nil {
			t.Fatalf("mesh-compare.sh %s: timed out\n%s", strings.Join(args, " "), out.String())
		}
		return run{out.String(), code, tmp}
	}
	expect := func(t *testing.T, r run, code int, want ...string) {
		t.Helper()
		if r.code != code {
			t.Errorf("exit status %d, want %d", r.code, code)
		}
		for _, w := range want {
			if !strings.Contains(r.out, w) {
				t.Errorf("output lacks %q", w)
			}
		}
		if t.Failed() {
			t.Logf("output:\n%s", r.out)
		}
	}

	t.Run("usage", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--variant", "ambient"}, "--variant ambient: want NAME=NAMESPACE"},
			{[]string{"--variant", "a b=bookinfo-x"}, "the name 'a b' must be letters, digits"},
			{[]string{"--variant", "waypoint=Bookinfo_Waypoint"}, "'Bookinfo_Waypoint' is not a namespace name"},
			{[]string{"--variant", "a=ns-a", "--variant", "a=ns-b"}, "the name a is given twice"},
			{[]string{"--variant", "a=ns-a", "--variant", "b=ns-a"}, "namespace ns-a is already variant a"},
			{[]string{"--variant", "a=ns-a?url=http://x:9080", "--variant", "b=ns-a?url=http://x:9080"}, "namespace ns-a is already variant a"},
			{[]string{"--variant", "a=ns-a?path=/x"}, "--variant a=ns-a?path=/x: after the namespace only ?url=BASE_URL"},
			{[]string{"--variant", "a=ns-a", "--baseline", "no-mesh"}, "--baseline no-mesh is not a variant (variants: a)"},
			{[]string{"--variant"}, "--variant needs NAME=NAMESPACE"},
			{[]string{"smoke", "other"}, "one scenario only"},
		} {
			t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
				expect(t, script(t, nil, tc.args...), 2, tc.want)
			})
		}
	})

	t.Run("namespace-missing", func(t *testing.T) {
		// Not one of the three overlays: never applied, even without --no-apply.
		r := script(t, nil, "--variant", "waypoint=mc-nowhere")
		expect(t, r, 1, "variant waypoint: namespace mc-nowhere does not exist: deploy the variant there first")
		r = script(t, nil, "--no-apply", "--variant", "plain=mc-plain", "--variant", "gone=mc-gone")
		expect(t, r, 1, "variant gone: namespace mc-gone does not exist")
	})

	t.Run("sidecar-without-istio-proxy", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "sc=mc-sidecar-bare")
		expect(t, r, 1,
			"variant sc: namespace mc-sidecar-bare, mesh: sidecar",
			"variant sc (sidecar), namespace mc-sidecar-bare, pod bare: no istio-proxy container",
			"refusing to measure: 1 data-path problem(s)")
	})

	t.Run("sidecar-not-ready", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "sc=mc-sidecar-pending")
		expect(t, r, 1, "variant sc (sidecar), namespace mc-sidecar-pending, pod pending: its istio-proxy (native sidecar) is not ready (pod phase Pending)")
	})

	t.Run("sidecar-ready", func(t *testing.T) {
		// istio.io/rev instead of istio-injection; one native, one classic sidecar.
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "sc=mc-sidecar-ok")
		expect(t, r, 0, "variant sc: namespace mc-sidecar-ok, mesh: sidecar", "data path checked: sc (sidecar)", "--check-only: no load")
	})

	t.Run("no-istiod", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--istio-namespace", "mc-no-istio", "--variant", "sc=mc-sidecar-ok")
		expect(t, r, 1, "variant sc is sidecar but there is no istiod Deployment in mc-no-istio")
	})

	t.Run("no-mesh-with-sidecar", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "plain=mc-plain", "--variant", "leaky=mc-plain-leaky")
		expect(t, r, 1,
			"variant leaky (no mesh), namespace mc-plain-leaky, pod injected: has an istio-proxy sidecar",
			"variant leaky (no mesh), namespace mc-plain-leaky, pod captured: labelled istio.io/dataplane-mode=ambient",
			"2 data-path problem(s)")
		if strings.Contains(r.out, "namespace mc-plain, pod") {
			t.Errorf("mc-plain (no sidecar, not ambient) was reported:\n%s", r.out)
		}
	})

	// One namespace, two variants: the matrix row's two details (a ?url= each).
	t.Run("one-namespace-two-urls", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "plain.nodelay=mc-plain", "--variant", "plain.nagle=mc-plain?url=http://details-nagle:9080")
		expect(t, r, 0, "variant plain.nagle: namespace mc-plain, mesh: none", "data path checked: plain.nodelay (none) plain.nagle (none)")
	})

	t.Run("ambient", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "plain=mc-plain", "--variant", "amb=mc-ambient")
		expect(t, r, 0, "variant amb: namespace mc-ambient, mesh: ambient", "data path checked: plain (none) amb (ambient)")
		args, _ := os.ReadFile(filepath.Join(r.tmp, "istioctl-args"))
		if got, want := strings.TrimSpace(string(args)), "-i mc-istio ztunnel-config workload --workload-namespace mc-ambient"; got != want {
			t.Errorf("istioctl ran with %q, want %q", got, want)
		}

		r = script(t, []string{"FAKE_ZTUNNEL=" + ztunnel(t, "mc-ambient   two   10.244.1.6   worker   None   TCP")},
			"--no-apply", "--check-only", "--variant", "amb=mc-ambient")
		expect(t, r, 1,
			"variant amb (ambient), namespace mc-ambient, pod one: not in ztunnel's workloads",
			"variant amb (ambient), namespace mc-ambient, pod two: ztunnel lists it with protocol TCP, not HBONE")

		r = script(t, []string{"ISTIOCTL=" + filepath.Join(dir, "no-istioctl")}, "--no-apply", "--check-only", "--variant", "amb=mc-ambient")
		expect(t, r, 1, "variant amb (ambient), namespace mc-ambient: "+filepath.Join(dir, "no-istioctl")+" is not on PATH")

		r = script(t, nil, "--no-apply", "--check-only", "--variant", "amb=mc-ambient-sidecar")
		expect(t, r, 1, "variant amb (ambient), namespace mc-ambient-sidecar, pod injected: has an istio-proxy sidecar")
	})

	t.Run("ambient-and-sidecar-labels", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "both=mc-both")
		expect(t, r, 1, "variant both: namespace mc-both is labelled for both sidecar injection")
	})

	t.Run("waypoint", func(t *testing.T) {
		// As created: the CRD's default status, Programmed Unknown.
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "wp=mc-waypoint")
		expect(t, r, 1, "variant wp (ambient), namespace mc-waypoint: its waypoint Gateway waypoint in mc-waypoint is not Programmed (status Unknown)")

		programmed := fmt.Sprintf(`{"status":{"conditions":[{"type":"Programmed","status":"True","reason":"Programmed","message":"","lastTransitionTime":%q,"observedGeneration":1}]}}`,
			time.Now().UTC().Format(time.RFC3339))
		if _, _, err := c.kubectl(nil, "-n", "mc-waypoint", "patch", "gateways.gateway.networking.k8s.io", "waypoint",
			"--subresource=status", "--type=merge", "-p", programmed); err != nil {
			t.Fatal(err)
		}
		r = script(t, nil, "--no-apply", "--check-only", "--variant", "wp=mc-waypoint")
		expect(t, r, 0, "data path checked: wp (ambient)")

		r = script(t, nil, "--no-apply", "--check-only", "--variant", "wp=mc-waypoint-missing")
		expect(t, r, 1, "its waypoint Gateway elsewhere (istio.io/use-waypoint) does not exist in mc-waypoint-missing")
	})

	t.Run("no-pods", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--variant", "empty=mc-empty")
		expect(t, r, 1, "variant empty (no mesh), namespace mc-empty: no running pods")
	})

	t.Run("skip-mesh-check", func(t *testing.T) {
		r := script(t, nil, "--no-apply", "--check-only", "--skip-mesh-check", "--variant", "sc=mc-sidecar-bare")
		expect(t, r, 0, "WARNING: --skip-mesh-check: THE DATA PATH OF THE VARIANTS IS NOT CHECKED")
	})

	// Past the checks, with stand-ins: kubectl's port-forward prints the line
	// kubectl prints and sleeps; bookload records its arguments and writes a
	// run directory. The run gets one target per variant, the baseline, the
	// labels and the pass-through arguments, comparison.md is written, and
	// the port-forwards are gone when the script has ended.
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "kubectl"), []byte(`#!/bin/bash
for a in "$@"; do
  if [ "$a" = port-forward ]; then
    echo "Forwarding from 127.0.0.1:$((20000 + RANDOM % 20000)) -> 8080"
    echo $$ >>"$FAKE_PF_PIDS"
    exec sleep 120
  fi
done
exec `+needKubectl(t)+` "$@"
`), 0o755)
	bookload := filepath.Join(bin, "bookload")
	os.WriteFile(bookload, []byte(`#!/bin/bash
echo "$*" >>"$FAKE_BOOKLOAD_ARGS"
case $1 in
  run)
    out=$(echo "$*" | sed -n 's/.* --out \([^ ]*\).*/\1/p')
    finish() { mkdir -p "$out/r"; echo '{}' >"$out/r/run.json"; echo "results: $out/r ($1, $2 of 1 repetitions)"; }
    trap 'kill $! 2>/dev/null; echo TERM >>"$FAKE_BOOKLOAD_ARGS"; finish partial 0; exit 1' TERM
    if [ -n "$FAKE_BOOKLOAD_READY" ]; then touch "$FAKE_BOOKLOAD_READY"; sleep 60 & wait $!; fi
    finish complete 1 ;;
  compare) echo "| target | p50 |" ;;
esac
`), 0o755)
	fakes := func(t *testing.T) (env []string, pfPids, args string) {
		dir := t.TempDir()
		pfPids, args = filepath.Join(dir, "pf-pids"), filepath.Join(dir, "bookload-args")
		return []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
			"BOOKLOAD=" + bookload, "FAKE_PF_PIDS=" + pfPids, "FAKE_BOOKLOAD_ARGS=" + args}, pfPids, args
	}
	portForwardsGone := func(t *testing.T, pidFile string, want int) {
		t.Helper()
		data, _ := os.ReadFile(pidFile)
		pids := strings.Fields(string(data))
		if len(pids) != want {
			t.Errorf("%d port-forwards started, want %d", len(pids), want)
		}
		for _, p := range pids {
			if _, err := os.Stat("/proc/" + p); err == nil {
				t.Errorf("port-forward %s still runs after the script ended", p)
			}
		}
	}

	t.Run("run", func(t *testing.T) {
		env, pfPids, args := fakes(t)
		out := t.TempDir()
		r := script(t, env, "--no-apply", "--variant", "plain=mc-plain", "--variant", "amb=mc-ambient",
			"--baseline", "amb", "--out", out, "details-100rps-10c", "--", "--repetitions", "1")
		expect(t, r, 0, "data path checked: plain (none) amb (ambient)", "comparison written to "+out+"/r/comparison.md")
		data, _ := os.ReadFile(args)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		re := regexp.MustCompile(`^run details-100rps-10c --target plain=fortio\+http://127\.0\.0\.1:\d+ --target amb=fortio\+http://127\.0\.0\.1:\d+ --baseline amb --out ` +
			regexp.QuoteMeta(out) + ` --label cluster=manifests --label istio=docker\.io/istio/pilot:1\.28\.0 --mesh plain=mc-plain:no-mesh --mesh amb=mc-ambient:ambient --istio-namespace mc-istio --repetitions 1$`)
		if len(lines) != 3 || !re.MatchString(lines[0]) || lines[1] != "compare "+out+"/r --baseline amb" || lines[2] != "compare "+out+"/r --baseline amb --format json" {
			t.Errorf("bookload ran as:\n%s", data)
		}
		if md, _ := os.ReadFile(filepath.Join(out, "r", "comparison.md")); !strings.Contains(string(md), "| target | p50 |") {
			t.Errorf("comparison.md: %q", md)
		}
		portForwardsGone(t, pfPids, 2)
	})

	t.Run("run-agent", func(t *testing.T) {
		// A namespace whose fortio pods run the bookload agent (the label of
		// components/bookload-agent) gets a bookload+http target; next to a
		// stock fortio one, the script warns that precision differs.
		env, pfPids, args := fakes(t)
		out := t.TempDir()
		r := script(t, env, "--no-apply", "--variant", "agent=mc-agent", "--variant", "plain=mc-plain", "--out", out)
		expect(t, r, 0, "bookload agent of mc-agent (agent) on 127.0.0.1:", "fortio of mc-plain (plain) on 127.0.0.1:",
			"WARNING: THE VARIANTS ARE MEASURED BY DIFFERENT LOAD CLIENTS: the bookload agent for agent")
		data, _ := os.ReadFile(args)
		re := regexp.MustCompile(`^run smoke --target agent=bookload\+http://127\.0\.0\.1:\d+ --target plain=fortio\+http://127\.0\.0\.1:\d+ --baseline agent `)
		if !re.Match(data) {
			t.Errorf("bookload ran as:\n%s", data)
		}
		portForwardsGone(t, pfPids, 2)

		env, pfPids, args = fakes(t)
		r = script(t, env, "--no-apply", "--variant", "agent=mc-agent", "--out", out)
		expect(t, r, 0, "bookload agent of mc-agent (agent)")
		if strings.Contains(r.out, "DIFFERENT LOAD CLIENTS") {
			t.Errorf("warned about different clients with one variant:\n%s", r.out)
		}
		if data, _ := os.ReadFile(args); !strings.HasPrefix(string(data), "run smoke --target agent=bookload+http://127.0.0.1:") {
			t.Errorf("bookload ran as:\n%s", data)
		}
		portForwardsGone(t, pfPids, 1)
	})

	t.Run("terminated", func(t *testing.T) {
		// SIGTERM while bookload runs: bookload gets TERM, the run directory
		// still gets its comparison, the port-forwards end, the status is 143.
		env, pfPids, args := fakes(t)
		out, tmp := t.TempDir(), t.TempDir()
		ready := filepath.Join(tmp, "bookload-ready")
		cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "mesh-compare.sh"),
			"--no-apply", "--variant", "plain=mc-plain", "--out", out)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig, "KUBECACHEDIR="+filepath.Join(c.dir, "kube-cache"),
			"TMPDIR="+tmp, "FAKE_BOOKLOAD_READY="+ready)
		cmd.Env = append(cmd.Env, env...)
		var output bytes.Buffer
		cmd.Stdout, cmd.Stderr = &output, &output
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("bookload never started:\n%s", output.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("the script did not end within 30 s of SIGTERM:\n%s", output.String())
		}
		r := run{output.String(), cmd.ProcessState.ExitCode(), tmp}
		expect(t, r, 143, "results: "+out+"/r (partial, 0 of 1 repetitions)", "comparison written to")
		if data, _ := os.ReadFile(args); !strings.Contains(string(data), "\nTERM\n") {
			t.Errorf("bookload did not get SIGTERM:\n%s", data)
		}
		portForwardsGone(t, pfPids, 1)
		if left, _ := filepath.Glob(filepath.Join(tmp, "tmp.*")); len(left) != 0 {
			t.Errorf("temp dir left behind: %v", left)
		}
	})

	t.Run("port-forward-fails-cleanly", func(t *testing.T) {
		// Past the checks: the port-forward to svc/fortio fails (no fortio
		// Service), the script stops and removes its temp dir.
		r := script(t, []string{"BOOKLOAD=/bin/true"}, "--no-apply", "--variant", "plain=mc-plain")
		expect(t, r, 1, "data path checked: plain (none)", "port-forward to svc/fortio in mc-plain failed")
		left, _ := filepath.Glob(filepath.Join(r.tmp, "tmp.*"))
		if len(left) != 0 {
			t.Errorf("temp dir left behind: %v", left)
		}
	})
}

// Namespaces and pods for TestMeshCompareScript; mc-istio stands for
// istio-system (objects only: no pod runs here).
const meshCompareFixtures = `
apiVersion: v1
kind: Namespace
metadata: {name: mc-istio}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: istiod, namespace: mc-istio}
spec:
  selector: {matchLabels: {app: istiod}}
  template:
    metadata: {labels: {app: istiod}}
    spec:
      containers: [{name: discovery, image: "docker.io/istio/pilot:1.28.0"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ztunnel, namespace: mc-istio}
spec:
  selector: {matchLabels: {app: ztunnel}}
  template:
    metadata: {labels: {app: ztunnel}}
    spec:
      containers: [{name: istio-proxy, image: "docker.io/istio/ztunnel:1.28.0"}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-no-istio}
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-empty}
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-plain, labels: {istio-injection: disabled, istio.io/dataplane-mode: none}}
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: mc-plain}
spec:
  containers: [{name: app, image: app}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-agent, labels: {istio-injection: disabled, istio.io/dataplane-mode: none}}
---
apiVersion: v1
kind: Pod
metadata: {name: fortio-agent, namespace: mc-agent, labels: {app: fortio, app.kubernetes.io/name: bookload}}
spec:
  containers: [{name: fortio, image: bookload}]
---
apiVersion: v1
kind: Pod
metadata: {name: fortio-stock, namespace: mc-plain, labels: {app: fortio}}
spec:
  containers: [{name: fortio, image: fortio}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-plain-leaky}
---
apiVersion: v1
kind: Pod
metadata: {name: injected, namespace: mc-plain-leaky}
spec:
  containers: [{name: app, image: app}, {name: istio-proxy, image: proxyv2}]
---
apiVersion: v1
kind: Pod
metadata: {name: captured, namespace: mc-plain-leaky, labels: {istio.io/dataplane-mode: ambient}}
spec:
  containers: [{name: app, image: app}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-sidecar-bare, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: bare, namespace: mc-sidecar-bare}
spec:
  containers: [{name: app, image: app}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-sidecar-pending, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: pending, namespace: mc-sidecar-pending}
spec:
  initContainers: [{name: istio-proxy, image: proxyv2, restartPolicy: Always}]
  containers: [{name: app, image: app}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-sidecar-ok, labels: {istio.io/rev: default}}
---
apiVersion: v1
kind: Pod
metadata: {name: native, namespace: mc-sidecar-ok}
spec:
  initContainers: [{name: istio-proxy, image: proxyv2, restartPolicy: Always}]
  containers: [{name: app, image: app}]
---
apiVersion: v1
kind: Pod
metadata: {name: classic, namespace: mc-sidecar-ok}
spec:
  containers: [{name: app, image: app}, {name: istio-proxy, image: proxyv2}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-ambient, labels: {istio.io/dataplane-mode: ambient}}
---
apiVersion: v1
kind: Pod
metadata: {name: one, namespace: mc-ambient}
spec:
  containers: [{name: app, image: app}]
---
apiVersion: v1
kind: Pod
metadata: {name: two, namespace: mc-ambient}
spec:
  containers: [{name: app, image: app}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-ambient-sidecar, labels: {istio.io/dataplane-mode: ambient}}
---
apiVersion: v1
kind: Pod
metadata: {name: injected, namespace: mc-ambient-sidecar}
spec:
  initContainers: [{name: istio-proxy, image: proxyv2, restartPolicy: Always}]
  containers: [{name: app, image: app}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-both, labels: {istio-injection: enabled, istio.io/dataplane-mode: ambient}}
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-waypoint, labels: {istio.io/dataplane-mode: ambient, istio.io/use-waypoint: waypoint}}
---
apiVersion: v1
kind: Pod
metadata: {name: wp-app, namespace: mc-waypoint}
spec:
  containers: [{name: app, image: app}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: mc-waypoint, labels: {istio.io/waypoint-for: service}}
spec:
  gatewayClassName: istio-waypoint
  listeners: [{name: mesh, port: 15008, protocol: HBONE}]
---
apiVersion: v1
kind: Namespace
metadata: {name: mc-waypoint-missing, labels: {istio.io/dataplane-mode: ambient, istio.io/use-waypoint: elsewhere}}
---
apiVersion: v1
kind: Pod
metadata: {name: wp-app, namespace: mc-waypoint-missing}
spec:
  containers: [{name: app, image: app}]
`
