package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/tests/waterfallcheck"
)

// ratingsLate is what the waterfall test adds in front of ratings.
const ratingsLate = 20 * time.Millisecond

// delayingProxy forwards to ratings after a delay that can be changed
// between runs: ratings answering late, as reviews sees it, with ratings'
// own time unchanged (a slow hop: what a mesh would add).
type delayingProxy struct {
	delay atomic.Int64 // ns
	srv   *http.Server
}

func startDelayingProxy(t *testing.T, l net.Listener, to string) *delayingProxy {
	t.Helper()
	target, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	p := &delayingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(p.delay.Load()))
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(l) }()
	t.Cleanup(func() { p.srv.Close() })
	return p
}

// waterfallDoc is the part of `bookload compare --format json` read here.
// With ratings answering 20 ms late, the waterfall of /productpage puts the
// 20 ms (within 5%) on the reviews -> ratings hop and none of it on the
// other parts; and with no mesh on loopback each hop's residual is logged
// against the loopback floors BENCHMARKS.md holds (two processes, the one
// the bench judges hops against, and in-process).
//
// One stack, its reviews wired to ratings through a proxy in this process.
// The proxy's delay alternates between runs (0, 20 ms, 0, ...): two
// targets on the same URL, interleaved by hand, paired by position.
func TestWaterfallPutsALateRatingsOnItsHop(t *testing.T) {
	s := stackWaterfall.need(t)
	proxy := startDelayingProxy(t, waterfallProxy, s.url("ratings", ""))
	if code, _ := get(t, client, s.url("productpage", "/productpage")); code != http.StatusOK {
		t.Fatalf("/productpage through the ratings proxy: %d", code)
	}

	dir := t.TempDir()
	sc := "name: waterfall\nservice: productpage\npath: /productpage\nwarmup: 1s\nrepetitions: 1\nkeepalive: true\nuniform: true\n" +
		"profiles:\n  - {name: 30rps-3c, qps: 30, connections: 3, duration: 8s}\n"
	scFile := filepath.Join(dir, "waterfall.yaml")
	if err := os.WriteFile(scFile, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	var runs []string
	for i := range 8 {
		name, delay := "direct", time.Duration(0)
		if i%2 == 1 {
			name, delay = "ratings-late", ratingsLate
		}
		proxy.delay.Store(int64(delay))
		out := filepath.Join(dir, fmt.Sprintf("run-%d", i))
		cmd := exec.Command(bookload, "run", scFile, "--out", out, "--target", name+"="+s.url("productpage", ""))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("bookload run (%s): %v\n%s", name, err, b)
		}
		found, _ := filepath.Glob(filepath.Join(out, "*", "run.json"))
		if len(found) != 1 {
			t.Fatalf("run %d: %v", i, found)
		}
		runs = append(runs, filepath.Dir(found[0]))
	}
	args := append([]string{"compare"}, runs...)
	b, err := exec.Command(bookload, append(args, "--baseline", "direct", "--format", "json")...).Output()
	if err != nil {
		t.Fatalf("bookload compare: %v", err)
	}
	var doc waterfallcheck.Doc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Waterfalls) != 1 || len(doc.Waterfalls[0].Targets) != 2 {
		t.Fatalf("waterfalls: %s", b)
	}
	w := doc.Waterfalls[0]
	if strings.Join(w.Path, ",") != "reviews,reviews.ratings" {
		t.Errorf("critical path %v, want reviews then ratings", w.Path)
	}
	if md, err := exec.Command(bookload, append(args, "--baseline", "direct")...).Output(); err == nil {
		if i := strings.Index(string(md), "Where the time goes"); i >= 0 {
			t.Logf("bookload compare:\n%s", md[i:])
		}
	}

	// At p50 the delay lands on the reviews -> ratings hop and nowhere else
	// (waterfallcheck says how it is judged).
	for _, f := range waterfallcheck.DelayOnHop(w.Targets[1].Splits, "hop:reviews.ratings", ratingsLate, t.Logf) {
		t.Error(f)
	}

	// No mesh on loopback: each hop's residual at p50 against the floors.
	floor, err := loopbackFloor(filepath.Join(repoRoot, "BENCHMARKS.md"), processFloorRow)
	if err != nil {
		t.Logf("no loopback floor to compare with: %v", err)
	}
	inProcess, _ := loopbackFloor(filepath.Join(repoRoot, "BENCHMARKS.md"), inProcessFloorRow)
	direct := w.Targets[0]
	for _, sp := range direct.Splits {
		if sp.Metric != "p50" {
			continue
		}
		for _, seg := range sp.Segments {
			if seg.Kind != "hop" {
				continue
			}
			note := ""
			if seg.Key == "hop:reviews.ratings" {
				note = " (through this test's proxy: a second loopback round trip)"
			}
			if floor > 0 {
				verdict := "within 2x"
				if seg.MS > 2*floor {
					verdict = "above 2x"
				}
				t.Logf("no mesh, p50 hop %-24s residual %.3f ms = %.1fx the loopback floor %.3f ms (two processes; %.1fx the in-process %.3f ms), %s%s",
					seg.Label, seg.MS, seg.MS/floor, floor, seg.MS/inProcess, inProcess, verdict, note)
			} else {
				t.Logf("no mesh, p50 hop %-24s residual %.3f ms%s", seg.Label, seg.MS, note)
			}
		}
	}
}

// The floor table's rows for fortio's echo server at uniform arrival: in a
// process of its own (the hop floor), and in bookload's process.
var (
	processFloorRow   = regexp.MustCompile("^\\| floor \\| fortio echo in a separate process \\(`bookload echo`\\)[^|]* \\| uniform \\|")
	inProcessFloorRow = regexp.MustCompile(`^\| floor \| floor: fortio echo \(in-process\) \| uniform \|`)
)

// loopbackFloor reads the p50 of row from BENCHMARKS.md's floor table (what
// make bench measured last).
func loopbackFloor(path string, row *regexp.Regexp) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if !row.MatchString(sc.Text()) {
			continue
		}
		// | part | endpoint | arrival | stack | qps | errors | p50 | ...
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 8 {
			break
		}
		return strconv.ParseFloat(strings.TrimSpace(cells[7]), 64)
	}
	return 0, fmt.Errorf("%s: no floor row %q", path, row)
}
