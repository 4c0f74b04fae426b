//go:build cluster

package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every pod of both namespaces is Ready, under Pod Security "restricted"
// enforced (a privileged pod is refused there), with no container restarted.
func TestPodsReadyUnderRestrictedPodSecurity(t *testing.T) {
	needDeployed(t)
	for _, v := range []variant{tuned, legacy} {
		t.Run(v.ns, func(t *testing.T) {
			enforce := mustKubectl(t, "get", "namespace", v.ns, "-o", `jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}`)
			if enforce != "restricted" {
				t.Fatalf("namespace %s enforces %q, want restricted", v.ns, enforce)
			}
			privileged := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"psa-probe","namespace":%q},
"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"localhost/bookinfo-bench/pause:3.10"}]}}`, v.ns)
			out, err := kubectlIn(strings.NewReader(privileged), "apply", "--dry-run=server", "-f", "-")
			if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
				t.Errorf("a hostNetwork pod in %s was not refused by Pod Security: %v %s", v.ns, err, out)
			}
			ps, err := pods(v.ns, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) < 7 {
				t.Errorf("%d pods in %s, want 7 (details, ratings, reviews v1-v3, productpage, fortio)", len(ps), v.ns)
			}
			for _, p := range ps {
				if !p.ready() {
					t.Errorf("pod %s/%s is not Ready (phase %s)", v.ns, p.Metadata.Name, p.Status.Phase)
				}
				for _, c := range p.Status.ContainerStatuses {
					if c.RestartCount != 0 {
						t.Errorf("pod %s/%s container %s restarted %d times", v.ns, p.Metadata.Name, c.Name, c.RestartCount)
					}
				}
			}
		})
	}
}

// The Istio docs' first check, as written there: curl the page from inside the
// ratings pod and grep its title.
func TestDocsTitleCheckFromRatingsPod(t *testing.T) {
	needDeployed(t)
	for _, v := range []variant{tuned, legacy} {
		t.Run(v.ns, func(t *testing.T) {
			name := mustKubectl(t, "-n", v.ns, "get", "pod", "-l", "app=ratings", "-o", "jsonpath={.items[0].metadata.name}")
			re := regexp.MustCompile(`<title>.*</title>`)
			eventually(t, 30*time.Second, "the docs' title check", func() error {
				page, err := kubectl("-n", v.ns, "exec", name, "-c", "ratings", "--", "curl", "-sS", "productpage:9080/productpage")
				if err != nil {
					return err
				}
				if got := re.FindString(page); got != "<title>Simple Bookstore App</title>" {
					return fmt.Errorf("grep -o found %q", got)
				}
				return nil
			})
		})
	}
}

// Through the productpage Service, the page shows each reviews version in
// turn: v1 without stars, v2 black stars, v3 red stars (docs/contract.md).
// Without a mesh kube-proxy balances connections, not requests: the tuned
// productpage keeps a pooled connection to reviews for
// UPSTREAM_MAX_REQUESTS_PER_CONNECTION (100) calls, so the versions change
// every hundred pages or so; the legacy one opens a connection per call.
//
// Each new connection goes to one of the three pods at random, so the
// chance that a version is still missing after n pages is about
// 3*(2/3)^(n/100) for the tuned productpage and 3*(2/3)^n for the legacy
// one: the bounds below keep that under one in a million. The loop stops as
// soon as all three showed (some 550 pages tuned on average).
func TestReviewsVersionsThroughTheService(t *testing.T) {
	needDeployed(t)
	for _, c := range []struct {
		v     variant
		pages int
	}{{tuned, 4000}, {legacy, 100}} {
		t.Run(c.v.ns, func(t *testing.T) {
			base := "http://" + clusterIP(t, c.v.ns, "productpage") + ":9080"
			client := &http.Client{Timeout: 10 * time.Second}
			served := regexp.MustCompile(`Reviews served by:\s*(?:<[^>]*>\s*)*(reviews-v[123])-`)
			seen := map[string]int{}
			pages := 0
			for ; pages < c.pages && len(seen) < 3; pages++ {
				code, body, err := get(client, base+"/productpage", nil)
				if err != nil || code != 200 {
					t.Fatalf("GET /productpage: %d %v", code, err)
				}
				for _, s := range []string{"Book Details", "William Shakespeare", "Book Reviews"} {
					if !strings.Contains(body, s) {
						t.Fatalf("the page lacks %q", s)
					}
				}
				m := served.FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("no %q with a reviews pod name on the page", "Reviews served by:")
				}
				stars := strings.Contains(body, "glyphicon glyphicon-star")
				switch m[1] {
				case "reviews-v1":
					if stars {
						t.Errorf("a page served by reviews v1 has stars")
					}
				case "reviews-v2", "reviews-v3":
					color := map[string]string{"reviews-v2": "black", "reviews-v3": "red"}[m[1]]
					if !stars || !strings.Contains(body, `color="`+color+`"`) {
						t.Errorf("a page served by %s lacks %s stars", m[1], color)
					}
				}
				seen[m[1]]++
			}
			t.Logf("%d pages until all three versions showed: %v", pages, seen)
			if len(seen) != 3 {
				t.Errorf("%d pages were served by %v, want all of reviews v1, v2, v3", pages, seen)
			}
		})
	}
}

// clusterIP is the Service's ClusterIP, which the node (this machine)
// reaches through kube-proxy's rules like any pod: unlike a port-forward it
// outlives the pods behind it.
func clusterIP(t *testing.T, ns, svc string) string {
	t.Helper()
	ip := strings.TrimSpace(mustKubectl(t, "-n", ns, "get", "service", svc, "-o", "jsonpath={.spec.clusterIP}"))
	if ip == "" {
		t.Fatalf("service %s/%s has no ClusterIP", ns, svc)
	}
	return ip
}

// bookload runs the repository's bookload binary.
func bookload(t *testing.T, args ...string) string {
	t.Helper()
	bin := filepath.Join(repo, "bin", "bookload")
	cmd := exec.Command(bin, args...)
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bookload %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// summaryRow is what the suite reads of `bookload run --format json`.
type summaryRow struct {
	Profile     string             `json:"profile"`
	Target      string             `json:"target"`
	N           int                `json:"n"`
	Errors      int64              `json:"errors"`
	Requests    int64              `json:"requests"`
	LatencyMS   map[string]float64 `json:"latency_ms"`
	CorrectedMS map[string]float64 `json:"corrected_latency_ms"`
}

// bookload run with the in-cluster engine, tuned and legacy interleaved: the
// legacy details (no TCP_NODELAY, head and body in two writes) stalls on the
// client's delayed ACK, the tuned one does not. One keep-alive connection at
// 100 RPS keeps the client's TCP in the mode where every response stalls
// (tests/e2e explains why 10 connections show it only in the far tail).
func TestInClusterNagleStallShowsOnlyInLegacy(t *testing.T) {
	needDeployed(t)
	nagleRun(t, "fortio+http")
}

// nagleRun runs the details scenario through each namespace's load client
// with the engine SCHEME (fortio+http or bookload+http), checks the stall and
// returns the summary rows.
func nagleRun(t *testing.T, scheme string) []summaryRow {
	t.Helper()
	pt := portForward(t, tuned.ns, "svc/fortio", "8080")
	pl := portForward(t, legacy.ns, "svc/fortio", "8080")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "cluster-details.yaml")
	if err := os.WriteFile(scenario, []byte(`name: cluster-details
description: details through the in-cluster load client, one keep-alive connection at 100 RPS
service: details
path: /details/0
warmup: 1s
repetitions: 4
profiles:
  - {name: 100rps-1c, qps: 100, connections: 1, duration: 3s}
headers: {}
keepalive: true
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := bookload(t, "run", scenario, "--out", dir, "--format", "json",
		"--target", "tuned="+scheme+"://127.0.0.1:"+pt, "--target", "legacy="+scheme+"://127.0.0.1:"+pl)
	var sum struct {
		Rows []summaryRow `json:"rows"`
	}
	// The run directory's line comes first, then the summary.
	if i := strings.Index(out, "{"); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("bookload run --format json: %v\n%s", err, out)
	}
	p99 := map[string]float64{}
	for _, r := range sum.Rows {
		if r.Errors != 0 || r.N != 4 {
			t.Errorf("target %s: %d errors, %d repetitions (want 0, 4)", r.Target, r.Errors, r.N)
		}
		p99[r.Target] = r.LatencyMS["p99"]
		t.Logf("in-cluster details through %s, %s: p50 %.2f ms, p99 %.2f ms (corrected p99 %.2f ms) over %d requests",
			scheme, r.Target, r.LatencyMS["p50"], r.LatencyMS["p99"], r.CorrectedMS["p99"], r.Requests)
	}
	if p99["legacy"] < 30 || p99["legacy"] < p99["tuned"]+10 {
		t.Errorf("legacy details p99 %.1f ms does not show the Nagle stall over tuned p99 %.1f ms (want >= 30 ms and 10 ms above)",
			p99["legacy"], p99["tuned"])
	}
	return sum.Rows
}

// scripts/mesh-compare.sh against the two namespaces as two variants gives
// its table; a variant called "sidecar" whose namespace has no sidecars is
// refused before any load.
func TestMeshCompareOnTheTwoNamespaces(t *testing.T) {
	needDeployed(t)
	out := t.TempDir()
	cmd := exec.Command("bash", "scripts/mesh-compare.sh", "smoke", "--no-apply", "--out", out,
		"--variant", "no-mesh="+tuned.ns, "--variant", "legacy="+legacy.ns)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mesh-compare.sh: %v\n%s", err, b)
	}
	tables, _ := filepath.Glob(filepath.Join(out, "*", "comparison.md"))
	if len(tables) != 1 {
		t.Fatalf("mesh-compare.sh wrote %d comparison.md files in %s, want 1\n%s", len(tables), out, b)
	}
	table, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"no-mesh", "legacy"} {
		if !regexp.MustCompile(`(?m)^\|.*\b` + name + `\b.*\|`).Match(table) {
			t.Errorf("comparison.md has no table row for %s:\n%s", name, table)
		}
	}
	t.Logf("mesh-compare.sh table:\n%s", table)

	cmd = exec.Command("bash", "scripts/mesh-compare.sh", "smoke", "--no-apply", "--check-only", "--variant", "sidecar="+tuned.ns)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	b, err = cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("mesh-compare.sh accepted a sidecar variant on %s, whose pods have no sidecar:\n%s", tuned.ns, b)
	}
	if !strings.Contains(string(b), "variant sidecar") {
		t.Errorf("mesh-compare.sh refused the sidecar variant without naming it:\n%s", b)
	}
	t.Logf("refused as it should: %s", strings.TrimSpace(lastLine(string(b))))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// The bookload agent as the in-cluster load client (the bookload-agent
// component on both namespaces, its image built and imported here): the
// same run through bookload+http targets reproduces the stall, now with
// bookload's own recording and the coordinated-omission-corrected latency.
// The agent stays for the tests after this one, which load through the
// fortio REST API it also serves.
func TestAgentInClusterShowsTheStallWithCorrectedLatency(t *testing.T) {
	needDeployed(t)
	for _, v := range []variant{tuned, legacy} {
		a := v
		a.components = append(append([]string{}, v.components...), "overlays/components/bookload-agent")
		if err := a.apply(); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []variant{tuned, legacy} {
		if _, err := kubectl("-n", v.ns, "rollout", "status", "deployment/fortio", "--timeout=5m"); err != nil {
			t.Fatal(err)
		}
		// The old fortio pod leaves after its grace period.
		eventually(t, 2*time.Minute, v.ns+": one Ready bookload agent pod as the load client", func() error {
			ps, err := pods(v.ns, "app=fortio")
			if err != nil {
				return err
			}
			if len(ps) != 1 || ps[0].Metadata.Labels["app.kubernetes.io/name"] != "bookload" || !ps[0].ready() {
				return fmt.Errorf("load client pods: %+v", ps)
			}
			return nil
		})
	}
	for _, r := range nagleRun(t, "bookload+http") {
		if r.CorrectedMS["p99"] < r.LatencyMS["p99"]*0.99 {
			t.Errorf("target %s: corrected p99 %.2f ms missing or below the plain p99 %.2f ms", r.Target, r.CorrectedMS["p99"], r.LatencyMS["p99"])
		}
	}
}

// fortioResult is what the suite reads of a fortio REST run.
type fortioResult struct {
	RetCodes          map[int]int64 `json:"RetCodes"`
	DurationHistogram struct {
		Count int64 `json:"Count"`
	} `json:"DurationHistogram"`
	ActualQPS float64 `json:"ActualQPS"`
}

// loadInCluster starts a fortio REST run of the full page from NS's fortio
// (at 20 RPS over 4 connections, for at most 10 minutes) and returns a
// function that stops it and returns its result.
func loadInCluster(t *testing.T, ns string) func() fortioResult {
	t.Helper()
	port := portForward(t, ns, "svc/fortio", "8080")
	base := "http://127.0.0.1:" + port + "/fortio/rest/"
	q := url.Values{"url": {"http://productpage:9080/productpage"}, "qps": {"20"}, "c": {"4"}, "t": {"600s"}, "timeout": {"5s"}}
	var res fortioResult
	var runErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := &http.Client{Timeout: 11 * time.Minute}
		resp, err := client.Get(base + "run?" + q.Encode())
		if err != nil {
			runErr = err
			return
		}
		defer resp.Body.Close()
		runErr = json.NewDecoder(resp.Body).Decode(&res)
	}()
	// The run is under way once fortio reports it.
	eventually(t, 20*time.Second, "the fortio run to start", func() error {
		_, body, err := get(&http.Client{Timeout: 5 * time.Second}, base+"status", nil)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		if !strings.Contains(body, `"RunID"`) {
			return fmt.Errorf("status %q: no RunID yet", body)
		}
		return nil
	})
	return func() fortioResult {
		if _, _, err := get(&http.Client{Timeout: 30 * time.Second}, base+"stop", nil); err != nil {
			t.Errorf("stopping the fortio run: %v", err)
		}
		wg.Wait()
		if runErr != nil {
			t.Fatalf("fortio run: %v", runErr)
		}
		return res
	}
}

// pagePoller fetches the page through the productpage Service's ClusterIP
// every EVERY, a new connection each time, and counts what it sees.
type pagePoller struct {
	mu                          sync.Mutex
	ok, degraded, other, errors int
	lastOK                      bool
	samples                     []string
	stop                        chan struct{}
	done                        sync.WaitGroup
}

func pollPage(t *testing.T, ns string, every time.Duration) *pagePoller {
	base := "http://" + clusterIP(t, ns, "productpage") + ":9080"
	p := &pagePoller{stop: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		for {
			select {
			case <-p.stop:
				return
			case <-time.After(every):
			}
			code, body, err := get(client, base+"/productpage", nil)
			p.mu.Lock()
			switch {
			case err != nil:
				p.errors++
				if len(p.samples) < 3 {
					p.samples = append(p.samples, err.Error())
				}
			case code == 200 && strings.Contains(body, "Book Details") && strings.Contains(body, "Book Reviews"):
				p.ok++
				p.lastOK = true
			case code == 200 && strings.Contains(body, "Error fetching product details"):
				p.degraded++
				p.lastOK = false
			default:
				p.other++
				p.lastOK = false
				if len(p.samples) < 3 {
					p.samples = append(p.samples, fmt.Sprintf("%d %.200s", code, body))
				}
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *pagePoller) finish() {
	close(p.stop)
	p.done.Wait()
}

// Killing details' pod under load: the page degrades per the contract (200,
// "Error fetching product details") and comes back when the Deployment has
// replaced the pod; the in-cluster client sees no failed request.
func TestKillDetailsPodUnderLoad(t *testing.T) {
	needDeployed(t)
	stopLoad := loadInCluster(t, tuned.ns)
	// Often: details is back within a few hundred milliseconds.
	poll := pollPage(t, tuned.ns, 20*time.Millisecond)
	time.Sleep(2 * time.Second)
	old := mustKubectl(t, "-n", tuned.ns, "get", "pod", "-l", "app=details", "-o", "jsonpath={.items[*].metadata.name}")
	mustKubectl(t, "-n", tuned.ns, "delete", "pod", "-l", "app=details", "--grace-period=0", "--force", "--wait=false")
	t.Logf("killed %s", old)
	eventually(t, 3*time.Minute, "a new details pod Ready", func() error {
		ps, err := pods(tuned.ns, "app=details")
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Metadata.Name != old && p.ready() {
				return nil
			}
		}
		return fmt.Errorf("no new Ready details pod yet")
	})
	eventually(t, time.Minute, "the page with details again", func() error {
		poll.mu.Lock()
		defer poll.mu.Unlock()
		if !poll.lastOK {
			return fmt.Errorf("the page still degraded")
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	poll.finish()
	res := stopLoad()
	t.Logf("page polls: %d full, %d degraded, %d other, %d transport errors; fortio: %v over %d requests",
		poll.ok, poll.degraded, poll.other, poll.errors, res.RetCodes, res.DurationHistogram.Count)
	if poll.degraded == 0 {
		t.Errorf("no page showed details as unavailable while details had no pod")
	}
	if poll.other != 0 || poll.errors != 0 {
		t.Errorf("%d pages were neither full nor degraded per the contract, %d requests failed: %q", poll.other, poll.errors, poll.samples)
	}
	if failed := res.DurationHistogram.Count - res.RetCodes[200]; failed != 0 || res.DurationHistogram.Count == 0 {
		t.Errorf("the in-cluster client saw %d failed of %d requests: %v", failed, res.DurationHistogram.Count, res.RetCodes)
	}
}

// kubectl rollout restart of every app Deployment while the in-cluster client
// loads the full page: no failed request, and no page missing a part (every
// service drains: readiness off, preStop, then the app's own drain). The
// load client itself is not restarted: its run would end with it.
func TestRolloutRestartUnderLoadLosesNothing(t *testing.T) {
	needDeployed(t)
	rolloutRestartUnderLoad(t, tuned)
}

func rolloutRestartUnderLoad(t *testing.T, v variant) {
	deps, err := v.deployments()
	if err != nil {
		t.Fatal(err)
	}
	var apps []string
	for _, d := range deps {
		if d != "fortio" {
			apps = append(apps, "deployment/"+d)
		}
	}
	stopLoad := loadInCluster(t, v.ns)
	poll := pollPage(t, v.ns, 100*time.Millisecond)
	time.Sleep(2 * time.Second)
	t0 := time.Now()
	mustKubectl(t, append([]string{"-n", v.ns, "rollout", "restart"}, apps...)...)
	if err := v.rollout(10*time.Minute, "fortio"); err != nil {
		t.Fatal(err)
	}
	// Old pods finish their drain (preStop 5 s + the app's drain) after the
	// new ones are Ready; keep loading until they are gone.
	eventually(t, 2*time.Minute, "the old pods gone", func() error {
		ps, err := pods(v.ns, "")
		if err != nil {
			return err
		}
		if len(ps) != len(deps) {
			return fmt.Errorf("%d pods, want %d", len(ps), len(deps))
		}
		return nil
	})
	t.Logf("%d Deployments restarted and old pods gone in %.0fs", len(apps), time.Since(t0).Seconds())
	time.Sleep(2 * time.Second)
	poll.finish()
	res := stopLoad()
	t.Logf("page polls: %d full, %d degraded, %d other, %d transport errors; fortio: %v over %d requests at %.1f RPS",
		poll.ok, poll.degraded, poll.other, poll.errors, res.RetCodes, res.DurationHistogram.Count, res.ActualQPS)
	if failed := res.DurationHistogram.Count - res.RetCodes[200]; failed != 0 || res.DurationHistogram.Count == 0 {
		t.Errorf("the in-cluster client saw %d failed of %d requests during the restarts: %v", failed, res.DurationHistogram.Count, res.RetCodes)
	}
	if poll.other != 0 || poll.errors != 0 {
		t.Errorf("%d answers that were not the page and %d failed requests during the restarts: %q", poll.other, poll.errors, poll.samples)
	}
	// Every service drains, so the page stays whole: 0 degraded of 300-400
	// polls on a quiet node. On an overloaded node a starved backend can
	// miss productpage's 3 s call timeout and the page degrades per the
	// contract (7 of 267 seen with another workload beside the suite): then
	// the count is reported, not failed.
	if poll.degraded != 0 {
		if load := loadAverage(); load > 2*float64(runtime.NumCPU()) {
			t.Logf("%d degraded pages during the restarts, with the node overloaded (load average %.1f on %d CPUs)", poll.degraded, load, runtime.NumCPU())
		} else {
			t.Errorf("%d degraded pages during the restarts (load average %.1f on %d CPUs): want the full page throughout", poll.degraded, load, runtime.NumCPU())
		}
	}
}

// The replicas component: two productpage replicas behind the Service share
// one session key, so the docs' login (as jason) holds whichever replica
// serves the next request. On one node its load client stays Pending by
// design (it must not share a node with details).
func TestReplicasLoginHoldsAcrossProductpageReplicas(t *testing.T) {
	needDeployed(t)
	if err := phase("deploy "+repl.ns, func() error {
		if err := repl.apply(); err != nil {
			return err
		}
		return repl.rollout(12*time.Minute, repl.later...)
	}); err != nil {
		t.Fatal(err)
	}
	ps, err := pods(repl.ns, "app=productpage")
	if err != nil {
		t.Fatal(err)
	}
	var ready []pod
	for _, p := range ps {
		if p.ready() {
			ready = append(ready, p)
		}
	}
	if len(ready) != 2 {
		t.Fatalf("%d Ready productpage pods in %s, want 2", len(ready), repl.ns)
	}
	// The load client comes last and stays off the node that runs details.
	mustKubectl(t, "-n", repl.ns, "scale", "deployment/fortio", "--replicas=1")
	eventually(t, time.Minute, "fortio Pending, unschedulable (required anti-affinity to details on one node)", func() error {
		out, err := kubectl("-n", repl.ns, "get", "pods", "-l", "app=fortio", "-o",
			`jsonpath={range .items[*]}{.status.phase}/{.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}`)
		if err == nil && strings.TrimSpace(out) != "Pending/Unschedulable" {
			err = fmt.Errorf("fortio pods: %q", out)
		}
		return err
	})

	// Log in on one replica (the pods' IPs are reachable from the node), use
	// the session on the other.
	jar, _ := cookiejar.New(nil)
	noRedirect := &http.Client{Timeout: 10 * time.Second, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	a, b := "http://"+ready[0].Status.PodIP+":9080", "http://"+ready[1].Status.PodIP+":9080"
	resp, err := noRedirect.PostForm(a+"/login", url.Values{"username": {"jason"}, "passwd": {"password"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("POST /login on %s: %d, want 302", ready[0].Metadata.Name, resp.StatusCode)
	}
	cookies := jar.Cookies(mustURL(t, a))
	if len(cookies) == 0 {
		t.Fatalf("POST /login on %s set no cookie", ready[0].Metadata.Name)
	}
	header := http.Header{}
	for _, c := range cookies {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	plain := &http.Client{Timeout: 10 * time.Second}
	for _, target := range []struct{ name, url string }{{ready[1].Metadata.Name, b}, {ready[0].Metadata.Name, a}} {
		code, body, err := get(plain, target.url+"/productpage", header)
		if err != nil || code != 200 || !strings.Contains(body, "jason") || !strings.Contains(body, "Sign out") {
			t.Errorf("GET /productpage on %s with the session from %s: %d %v, logged in as jason: %v",
				target.name, ready[0].Metadata.Name, code, err, strings.Contains(body, "jason"))
		}
	}
	// And through the Service, which spreads connections over both.
	port := portForward(t, repl.ns, "svc/productpage", "9080")
	for i := 0; i < 10; i++ {
		code, body, err := get(&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
			"http://127.0.0.1:"+port+"/productpage", header)
		if err != nil || code != 200 || !strings.Contains(body, "Sign out") {
			t.Fatalf("GET /productpage through the Service, request %d: %d %v, logged in: %v", i, code, err, strings.Contains(body, "Sign out"))
		}
	}
	if err := deleteNamespaces(repl.ns); err != nil {
		t.Error(err)
	}
}

// loadAverage is the node's (this machine's) one-minute load average.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
