package e2e

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sys/unix"
)

// How many TCP segments with data one response takes on loopback: each
// write of the server becomes a segment of its own there (the MTU is 64 KiB
// and these bodies are small), so this is the number of writes the framework
// makes per response, the fact the app DESIGN.md files record. A mesh proxy that
// coalesces writes changes exactly this, which is why it must be known.
var writesPerResponse = []struct {
	service, path string
	writes        int
	why           string
}{
	{"details", "/details/0", 2, "WEBrick writes the head, then the body"},
	{"details", "/health", 2, "WEBrick writes the head, then the body"},
	{"productpage", "/productpage", 2, "gunicorn sends the head, then the body"},
	{"productpage", "/health", 2, "gunicorn sends the head, then the body"},
	{"reviews", "/reviews/0", 1, "Jetty sends its buffered head and body together"},
	{"reviews", "/health", 1, "Jetty sends its buffered head and body together"},
	{"ratings", "/ratings/0", 1, "Node sends the head with the body of res.end"},
	{"ratings", "/health", 1, "Node sends the head with the body of res.end"},
}

// TestWritesPerResponse counts, with TCP_INFO on the client's own socket,
// the data segments of each response of each service, keep-alive on and
// off, in the tuned and the legacy profile.
func TestWritesPerResponse(t *testing.T) {
	for _, st := range []*stack{stackV2, stackLegacy, stackClose} {
		st := st.need(t)
		for _, w := range writesPerResponse {
			t.Run(st.name+" "+w.service+w.path, func(t *testing.T) {
				// The fewest segments any of the responses took: a lost or
				// late ACK on a loaded machine can make the kernel send a
				// segment again, which only ever adds one, while a server
				// that writes once never takes two and one that writes
				// twice never takes one.
				segs := responseSegments(t, st.port(w.service), w.path, 5)
				if n := slices.Min(segs); n != w.writes {
					t.Errorf("responses took %v segments, want %d each (%s)", segs, w.writes, w.why)
				}
			})
		}
	}
}

// responseSegments sends n GET requests one after another (on one
// connection while the server keeps it alive, else each on a new one) and
// returns the data segments each response took.
func responseSegments(t *testing.T, port int, path string, n int) []int {
	t.Helper()
	var segs []int
	var conn *net.TCPConn
	var br *bufio.Reader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for i := 0; i < n; i++ {
		if conn == nil {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
			if err != nil {
				t.Fatalf("dial %d: %v", port, err)
			}
			conn, br = c.(*net.TCPConn), bufio.NewReader(c)
		}
		before := dataSegsIn(t, conn)
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: wire-test\r\n\r\n", path, port); err != nil {
			t.Fatalf("write: %v", err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d, body %q, err %v", path, resp.StatusCode, body, err)
		}
		if resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 {
			t.Fatalf("GET %s: response framed by closing the connection", path)
		}
		if br.Buffered() > 0 {
			t.Fatalf("GET %s: %d bytes after the response", path, br.Buffered())
		}
		segs = append(segs, dataSegsIn(t, conn)-before)
		if resp.Close {
			conn.Close()
			conn = nil
		}
	}
	return segs
}

func dataSegsIn(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	var serr error
	if err := raw.Control(func(fd uintptr) {
		info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || serr != nil {
		t.Fatalf("TCP_INFO: %v %v", err, serr)
	}
	return int(info.Data_segs_in)
}

// The two catalogue families, as docs/configuration.md states them.
var catalogue = map[string]struct {
	typ  dto.MetricType
	help string
}{
	"http_requests_total":           {dto.MetricType_COUNTER, "HTTP requests served, by method, route pattern and status."},
	"http_request_duration_seconds": {dto.MetricType_HISTOGRAM, "Time to serve an HTTP request, by method, route pattern and status."},
}

var catalogueBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// TestMetricsAreTheSameEverywhere scrapes all four services of one running
// stack, after traffic that reached each, and checks that the two
// catalogue families have the same type, HELP, labels and buckets in each,
// and that a 404 is counted under route "unmatched".
func TestMetricsAreTheSameEverywhere(t *testing.T) {
	st := stackV2.need(t)
	get(t, client, st.url("productpage", "/productpage")) // reaches details, reviews, ratings
	for _, svc := range []string{"productpage", "details", "reviews", "ratings"} {
		get(t, client, st.url(svc, "/health"))
		get(t, client, st.url(svc, "/no/such/path"))
	}
	time.Sleep(metricsMaxAge) // past a render from before these requests
	for _, svc := range []string{"productpage", "details", "reviews", "ratings"} {
		t.Run(svc, func(t *testing.T) {
			resp, err := client.Get(st.url(svc, "/metrics"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(ct, "version=0.0.4") {
				t.Errorf("Content-Type %q: want the text format 0.0.4", ct)
			}
			p := expfmt.NewTextParser(model.LegacyValidation)
			fams, err := p.TextToMetricFamilies(resp.Body)
			if err != nil {
				t.Fatalf("/metrics does not parse as the Prometheus text format: %v", err)
			}
			for name, want := range catalogue {
				f := fams[name]
				if f == nil {
					t.Errorf("%s: family missing", name)
					continue
				}
				if f.GetType() != want.typ {
					t.Errorf("%s: type %v, want %v", name, f.GetType(), want.typ)
				}
				if f.GetHelp() != want.help {
					t.Errorf("%s: HELP %q, want %q", name, f.GetHelp(), want.help)
				}
				routes := map[string]bool{}
				for _, m := range f.GetMetric() {
					var labels []string
					for _, l := range m.GetLabel() {
						labels = append(labels, l.GetName())
						if l.GetName() == "route" {
							routes[l.GetValue()] = true
						}
					}
					sort.Strings(labels)
					if !slices.Equal(labels, []string{"method", "route", "status"}) {
						t.Errorf("%s: labels %v, want method, route, status", name, labels)
						break
					}
					if h := m.GetHistogram(); h != nil {
						var les []float64
						for _, b := range h.GetBucket() {
							if !math.IsInf(b.GetUpperBound(), 1) {
								les = append(les, b.GetUpperBound())
							}
						}
						if !slices.Equal(les, catalogueBuckets) {
							t.Errorf("%s: buckets %v, want %v", name, les, catalogueBuckets)
							break
						}
					}
				}
				for _, r := range []string{"/health", "unmatched"} {
					if !routes[r] {
						t.Errorf("%s: no series with route=%q (routes: %v)", name, r, keys(routes))
					}
				}
			}
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
