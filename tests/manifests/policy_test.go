package manifests

import (
	"slices"
	"strconv"
	"testing"
)

// The project's container hardening (overlays/README.md), checked on every rendered
// Deployment of every target (a component could undo it). Pod Security
// "restricted" itself is decided by the API server in TestPodSecurity.
func TestPolicy(t *testing.T) {
	for _, tg := range append([]target{baseTarget()}, allTargets(t)...) {
		r := render(t, tg)
		deps := r.deployments(t)
		for _, name := range sortedKeys(deps) {
			d := deps[name]
			t.Run(tg.name+"/"+name, func(t *testing.T) { checkDeployment(t, d) })
		}
	}
}

func checkDeployment(t *testing.T, d deployment) {
	pod := d.Spec.Template
	for _, l := range []string{"app", "version"} {
		if pod.Metadata.Labels[l] == "" || d.Metadata.Labels[l] != pod.Metadata.Labels[l] {
			t.Errorf("label %q: Deployment %q, pod %q: want the same non-empty value on both", l, d.Metadata.Labels[l], pod.Metadata.Labels[l])
		}
	}
	sc := pod.Spec.SecurityContext
	switch sc {
	case nil:
		t.Error("no pod securityContext")
	default:
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Error("pod runAsNonRoot is not true")
		}
		for what, id := range map[string]*int64{"runAsUser": sc.RunAsUser, "runAsGroup": sc.RunAsGroup, "fsGroup": sc.FSGroup} {
			if id == nil || *id <= 0 {
				t.Errorf("pod %s: want a numeric non-root id", what)
			}
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != "RuntimeDefault" {
			t.Error("pod seccompProfile is not RuntimeDefault")
		}
	}
	if len(pod.Spec.InitContainers) > 0 {
		t.Error("init containers: none expected (they would need the same checks)")
	}
	emptyDirs := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil {
			emptyDirs[v.Name] = true
		}
	}
	for _, c := range pod.Spec.Containers {
		checkContainer(t, c, emptyDirs)
		if pod.Metadata.Labels["app"] == "fortio" {
			continue
		}
		// Only the apps drain; fortio just stops.
		drain := 10
		if v, ok := c.env("SHUTDOWN_TIMEOUT_SECONDS"); ok {
			var err error
			if drain, err = strconv.Atoi(v); err != nil {
				t.Errorf("%s: SHUTDOWN_TIMEOUT_SECONDS=%q", c.Name, v)
			}
		}
		preStop := 0
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
			t.Errorf("%s: preStop sleep action: it needs Kubernetes 1.30 (and its feature gate before), above the minimum %s; exec the image's sleep", c.Name, minKubernetes)
		}
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Exec != nil {
			if cmd := c.Lifecycle.PreStop.Exec.Command; len(cmd) == 2 && cmd[0] == "sleep" {
				preStop, _ = strconv.Atoi(cmd[1])
			}
		}
		if preStop == 0 {
			t.Errorf("%s: no preStop [sleep N]: the endpoint may still get requests after SIGTERM", c.Name)
		}
		grace := 30 // Kubernetes' default
		if pod.Spec.TerminationGracePeriodSeconds != nil {
			grace = *pod.Spec.TerminationGracePeriodSeconds
		}
		if grace <= preStop+drain {
			t.Errorf("%s: terminationGracePeriodSeconds %d <= preStop %d s + drain %d s: the drain would be cut by SIGKILL", c.Name, grace, preStop, drain)
		}
		ann := pod.Metadata.Annotations
		if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != "9080" || ann["prometheus.io/path"] != "/metrics" {
			t.Errorf("%s: prometheus.io annotations %v: want scrape true, port 9080, path /metrics", c.Name, ann)
		}
		for _, p := range []*probe{c.ReadinessProbe, c.LivenessProbe} {
			if p != nil && p.HTTPGet != nil && p.HTTPGet.Path != "/health" {
				t.Errorf("%s: probe path %q: want /health", c.Name, p.HTTPGet.Path)
			}
		}
	}
}

func checkContainer(t *testing.T, c container, emptyDirs map[string]bool) {
	t.Helper()
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil {
		t.Errorf("%s: no HTTP readiness probe", c.Name)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil {
		t.Errorf("%s: no HTTP liveness probe", c.Name)
	}
	if rq, err := quantity(c.Resources.Requests["cpu"]); err != nil || rq <= 0 {
		t.Errorf("%s: cpu request %q: want one", c.Name, c.Resources.Requests["cpu"])
	}
	// Memory: a limit, so a leak ends in a restart rather than a node
	// under pressure. CPU limits are the resources-dedicated component's
	// business only (checked per rendering in TestNoCPULimitsByDefault).
	req, lim := c.Resources.Requests["memory"], c.Resources.Limits["memory"]
	rq, err1 := quantity(req)
	lq, err2 := quantity(lim)
	if err1 != nil || err2 != nil || rq <= 0 || rq > lq {
		t.Errorf("%s: memory request %q, limit %q: want 0 < request <= limit", c.Name, req, lim)
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Errorf("%s: no container securityContext", c.Name)
		return
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation is not false", c.Name)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem is not true", c.Name)
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser <= 0 {
		t.Errorf("%s: want runAsNonRoot and a numeric non-root runAsUser", c.Name)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged", c.Name)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("%s: capabilities: want drop [ALL] and nothing added", c.Name)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("%s: seccompProfile is not RuntimeDefault", c.Name)
	}
	tmp := false
	for _, m := range c.VolumeMounts {
		if m.MountPath == "/tmp" && emptyDirs[m.Name] {
			tmp = true
		}
	}
	if !tmp {
		t.Errorf("%s: no emptyDir at /tmp: with a read-only root nothing could write temporary files", c.Name)
	}
}
