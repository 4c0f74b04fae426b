package e2e

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsMaxAge is how old an answer to GET /metrics may be
// (docs/contract.md): a test that counts its own requests waits this long
// before it scrapes.
const metricsMaxAge = time.Second

// routeProbes are, per service, a path to each of its routes and one that
// no route matches. In each, %n becomes fresh digits and %a fresh letters,
// so that two passes reach the same routes, with the same answers, by
// paths that differ.
var routeProbes = map[string][]string{
	"productpage": {"/", "/index.html", "/productpage", "/login", "/logout", "/api/v1/products",
		"/api/v1/products/%n", "/api/v1/products/%n/reviews", "/api/v1/products/%n/ratings",
		"/health", "/metrics", "/static/productpage.css", "/static/%a.css", "/%a/%a"},
	"details": {"/details/%n", "/details/%a", "/details", "/health", "/metrics", "/%a/%a"},
	"reviews": {"/reviews/%n", "/reviews/%a", "/health", "/metrics", "/%a/%a"},
	"ratings": {"/ratings/%n", "/ratings/%a", "/ratings", "/health", "/metrics", "/%a/%a"},
}

// passMethods: the methods a client may send anywhere, then %M (fresh
// capitals, a token no service knows) and %m (fresh lower case).
var passMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "%M", "%m"}

func fresh(rng *rand.Rand, pattern string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '%' || i+1 == len(pattern) {
			b.WriteByte(pattern[i])
			continue
		}
		i++
		alphabet := map[byte]string{'n': "0123456789", 'a': "abcdefghijklmnopqrstuvwxyz", 'M': "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 'm': "abcdefghijklmnopqrstuvwxyz"}[pattern[i]]
		n := 6
		if pattern[i] == 'n' {
			n = 1 + rng.Intn(5) // within reviews' Java int
		}
		for j := 0; j < n; j++ {
			b.WriteByte(alphabet[rng.Intn(len(alphabet))])
		}
	}
	return b.String()
}

// everyMethodOnEveryRoute sends each of passMethods to each of svc's
// routeProbes, one request per connection with a 2-byte body, and reads
// every answer.
func everyMethodOnEveryRoute(t *testing.T, port int, svc string, rng *rand.Rand) {
	t.Helper()
	for _, path := range routeProbes[svc] {
		for _, method := range passMethods {
			raw := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", fresh(rng, method), fresh(rng, path))
			r, err := tryExchange(port, raw, false, 5*time.Second, time.Second)
			if err != nil || len(r.resps) != 1 {
				t.Fatalf("%s: %q: %v %v; want one answer", svc, raw, r, err)
			}
		}
	}
}

// scrape returns svc's GET /metrics, parsed.
func scrape(t *testing.T, port int) (size int, requests []string) {
	t.Helper()
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	for _, m := range fams["http_requests_total"].GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(labels)
		requests = append(requests, strings.Join(labels, ","))
	}
	sort.Strings(requests)
	return len(body), requests
}

// TestHostileMethodsAndPathsAddNoSeries: the label sets of every service's
// metrics are bounded by design (routes as their templates, a 404 as
// "unmatched", any method outside the standard ones as "OTHER"). One pass
// of every method on every route reaches the bound; a second pass, with
// other made-up methods and other paths to the same routes, adds no series.
func TestHostileMethodsAndPathsAddNoSeries(t *testing.T) {
	st := stackCrowd.need(t)
	pass := func(seed int64) map[string][]string {
		rng := rand.New(rand.NewSource(seed))
		// productpage's pass reaches the others: all of them, always.
		for _, svc := range allServices {
			everyMethodOnEveryRoute(t, st.port(svc), svc, rng)
		}
		time.Sleep(metricsMaxAge)
		sets := map[string][]string{}
		for _, svc := range services {
			_, sets[svc] = scrape(t, st.port(svc))
		}
		return sets
	}
	first, second := pass(1), pass(2)
	for _, svc := range services {
		var added []string
		for _, s := range second[svc] {
			if !slices.Contains(first[svc], s) {
				added = append(added, s)
			}
		}
		t.Logf("%s: %d label sets of http_requests_total after one pass, %d after another", svc, len(first[svc]), len(second[svc]))
		if len(added) > 0 {
			t.Errorf("%s: a second pass with other methods and paths added %d label sets: %v", svc, len(added), added)
		}
	}
}
