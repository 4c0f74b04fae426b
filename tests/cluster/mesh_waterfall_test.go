//go:build cluster

package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/tests/waterfallcheck"
)

// ratingsLate is the delay put in front of ratings.
const ratingsLate = 20 * time.Millisecond

// With ratings answering 20 ms late, the waterfall of /productpage puts the
// 20 ms on the reviews -> ratings hop and none of it on the others, in the
// one-node cluster as on loopback (tests/e2e). The delay is Istio's own
// fault injection, in the sidecar namespace: reviews' sidecar holds each
// call to ratings 20 ms, so reviews waits 20 ms longer while ratings' own
// time does not change. (Without a sidecar nothing here can delay one hop
// alone: ambient's L7 faults need a waypoint.) Runs alternate without and
// with the rule, through the namespace's bookload agent, paired by position.
//
// reviews-v1 calls no ratings, so it is scaled to zero for the test: with
// it a third of the pages are not delayed, the late runs' p50 bucket holds
// only delayed pages from the low end of their spread while the direct
// runs' holds a mix, and the hop at p50 moves by more or less than the
// delay with the hop's own time (about 3 ms here) and the spread of the
// other parts: with v1, three runs put the total at +18.5, +19.2 and
// +18.7 ms. With every page calling ratings the delay shifts them all and
// both buckets hold the same kind of page: total +20.0 ms, hop +20.6 ms
// [20.2, 21.1] (with v1: [19.3, 21.1] at best).
func TestMeshWaterfallPutsALateRatingsOnItsHop(t *testing.T) {
	needMesh(t)
	ns := sidecar.ns
	mustKubectl(t, "-n", ns, "scale", "deployment/reviews-v1", "--replicas=0")
	defer func() {
		_, _ = kubectl("-n", ns, "scale", "deployment/reviews-v1", "--replicas=1")
		_, _ = kubectl("-n", ns, "rollout", "status", "deployment/reviews-v1", "--timeout=5m")
	}()
	eventually(t, 2*time.Minute, "reviews-v1's pods gone", func() error {
		out, err := kubectl("-n", ns, "get", "pods", "-l", "app=reviews,version=v1", "-o", "name")
		if err == nil && out != "" {
			err = fmt.Errorf("still there: %s", out)
		}
		return err
	})
	rule := fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ratings-late, namespace: %s}
spec:
  hosts: [ratings]
  http:
  - fault:
      delay: {percentage: {value: 100}, fixedDelay: %gs}
    route:
    - destination: {host: ratings}
`, ns, ratingsLate.Seconds())
	defer func() { _, _ = kubectl("-n", ns, "delete", "--ignore-not-found", "virtualservice", "ratings-late") }()
	// reviews' calls to ratings as reviews makes them (through its sidecar):
	// three in a row on the right side of the delay, then a few seconds for
	// the other reviews pods' sidecars to have the same routes.
	settle := func(late bool) {
		eventually(t, time.Minute, fmt.Sprintf("reviews' calls to ratings late: %v", late), func() error {
			for range 3 {
				out, err := kubectl("-n", ns, "exec", "deploy/reviews-v2", "-c", "reviews", "--",
					"curl", "-sS", "-m", "5", "-o", "/dev/null", "-w", "%{time_total}", "http://ratings:9080/ratings/0")
				if err != nil {
					return err
				}
				took, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
				if err != nil {
					return err
				}
				if (took >= ratingsLate.Seconds()) != late {
					return fmt.Errorf("a call took %.1f ms", took*1000)
				}
			}
			return nil
		})
		time.Sleep(3 * time.Second)
	}

	// A split at p50 is the mean over the requests in the 1%-wide latency
	// bucket that holds p50: at 30 RPS for 8 s that was four or five requests
	// a run, and one pair's difference moved by 1.5 ms with the machine's
	// noise. A thousand requests a run and five pairs keep the mean of the
	// pairs within a third of a millisecond of the delay.
	const pairs = 5
	dir := t.TempDir()
	sc := filepath.Join(dir, "waterfall.yaml")
	if err := os.WriteFile(sc, []byte("name: waterfall\nservice: productpage\npath: /productpage\nwarmup: 1s\nrepetitions: 1\nkeepalive: true\nuniform: true\n"+
		"profiles:\n  - {name: 50rps-3c, qps: 50, connections: 3, duration: 20s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := "bookload+http://127.0.0.1:" + portForward(t, ns, "svc/fortio", "8080")
	var runs []string
	for i := range 2 * pairs {
		name := "direct"
		if i%2 == 1 {
			name = "ratings-late"
			applyYAML(t, rule)
		} else {
			_, _ = kubectl("-n", ns, "delete", "--ignore-not-found", "virtualservice", "ratings-late")
		}
		settle(i%2 == 1)
		out := filepath.Join(dir, fmt.Sprintf("run-%d", i))
		bookload(t, "run", sc, "--out", out, "--target", name+"="+agent)
		found, _ := filepath.Glob(filepath.Join(out, "*", "run.json"))
		if len(found) != 1 {
			t.Fatalf("run %d: %v", i, found)
		}
		runs = append(runs, filepath.Dir(found[0]))
	}
	args := append([]string{"compare"}, runs...)
	var doc waterfallcheck.Doc
	if err := json.Unmarshal([]byte(bookload(t, append(args, "--baseline", "direct", "--format", "json")...)), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Waterfalls) != 1 || len(doc.Waterfalls[0].Targets) != 2 {
		t.Fatalf("waterfalls: %+v", doc)
	}
	w := doc.Waterfalls[0]
	if strings.Join(w.Path, ",") != "reviews,reviews.ratings" {
		t.Errorf("critical path %v, want reviews then ratings", w.Path)
	}
	if md := bookload(t, append(args, "--baseline", "direct")...); strings.Contains(md, "Where the time goes") {
		t.Logf("bookload compare:\n%s", md[strings.Index(md, "Where the time goes"):])
	}
	for _, f := range waterfallcheck.DelayOnHop(w.Targets[1].Splits, "hop:reviews.ratings", ratingsLate, t.Logf) {
		t.Error(f)
	}
}
