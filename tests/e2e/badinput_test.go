package e2e

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Randomized requests, written as raw bytes so that paths and headers can
// be what no well-behaved client would send. Every request must be answered
// within 1 s with a framed response, no 5xx; services stay healthy.
func TestBadInputIsAnsweredNeverHung(t *testing.T) {
	st := stackV2.need(t)
	// One page first: the first request through a just-started JVM (reviews
	// initializes Spring MVC's dispatcher lazily) can take most of a second,
	// which is a cold start, not the hang this test is about.
	for _, svc := range []string{"productpage", "details", "reviews", "ratings"} {
		get(t, client, st.url(svc, "/health"))
	}
	get(t, client, st.url("productpage", "/productpage"))
	rng := rand.New(rand.NewSource(20261122))
	prefixes := map[string][]string{
		"productpage": {"/productpage", "/api/v1/products/", "/api/v1/products/%s/reviews", "/api/v1/products/%s/ratings", "/login", "/logout", "/static/", "/", "/index.html", "/metrics"},
		"details":     {"/details/", "/details", "/health", "/metrics", "/"},
		"reviews":     {"/reviews/", "/reviews", "/health", "/metrics", "/"},
		"ratings":     {"/ratings/", "/ratings", "/health", "/metrics", "/"},
	}
	ids := []string{"0", "1", "-1", "-0", "007", "2147483647", "2147483648", "-2147483649", "99999999999999999999999999",
		"abc", "1e3", "0x1F", "１２", "%C3%A9", "%00", "%ff", "..%2F..%2Fetc%2Fpasswd", "../../etc/passwd", "1;drop", "1%20", "", "%",
		strings.Repeat("9", 300), strings.Repeat("a", 2000), "<script>", "%3Cscript%3E", "1?x=<y>", "1#frag", "1/extra/segments"}
	methods := []string{"GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "BREW", "get"}
	bodies := []string{"", `{"Reviewer1":1}`, `{bad json`, `[]`, `null`, `"x"`, strings.Repeat("{", 500), "username=jason&passwd=x", "\x00\xff\xfe"}
	headers := []string{"end-user: jason", "x-request-id: " + strings.Repeat("r", 500), "cookie: session=garbage", "cookie: session=" + strings.Repeat("A", 3000),
		"user-agent: \xc3\xa9\xff", "traceparent: nonsense", "content-type: application/json", "content-type: application/x-www-form-urlencoded",
		"accept: */*", "referer: http://evil.example/", "authorization: Bearer x", "x-b3-sampled: 1", "connection: keep-alive"}

	type job struct{ svc, raw, desc string }
	var jobs []job
	const perService = 750
	for _, svc := range []string{"productpage", "details", "reviews", "ratings"} {
		for i := 0; i < perService; i++ {
			p := prefixes[svc][rng.Intn(len(prefixes[svc]))]
			id := ids[rng.Intn(len(ids))]
			if strings.Contains(p, "%s") {
				p = fmt.Sprintf(p, id)
			} else if strings.HasSuffix(p, "/") {
				p += id
			}
			if p == "" || p[0] != '/' {
				p = "/" + p
			}
			m := methods[rng.Intn(len(methods))]
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n", m, p)
			for n := rng.Intn(4); n > 0; n-- {
				b.WriteString(headers[rng.Intn(len(headers))] + "\r\n")
			}
			body := ""
			if m == "POST" || m == "PUT" || m == "PATCH" {
				body = bodies[rng.Intn(len(bodies))]
			}
			fmt.Fprintf(&b, "Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			head, _, _ := strings.Cut(b.String(), "\r\n\r\n")
			jobs = append(jobs, job{svc, b.String(), fmt.Sprintf("%s %q", svc, truncate(head, 300))})
		}
	}

	var mu sync.Mutex
	failures := map[string]int{}
	var examples []string
	fail := func(kind, desc string) {
		mu.Lock()
		defer mu.Unlock()
		failures[kind]++
		if failures[kind] <= 3 {
			examples = append(examples, kind+": "+desc)
		}
	}
	work := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				code, err := rawRequest(st.port(j.svc), j.raw)
				switch {
				case err != nil:
					fail(j.svc+": "+err.Error(), j.desc)
				case code >= 500:
					fail(fmt.Sprintf("%s: status %d", j.svc, code), j.desc)
				}
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	t.Logf("%d randomized requests, failures by kind: %v", len(jobs), failures)
	for _, e := range examples {
		t.Errorf("%s", e)
	}
	for _, svc := range []string{"productpage", "details", "reviews", "ratings"} {
		if code, _ := get(t, client, st.url(svc, "/health")); code != 200 {
			t.Errorf("%s /health = %d after the bad input", svc, code)
		}
	}
}

// rawRequest writes raw to port and reads one framed response within 1 s.
func rawRequest(port int, raw string) (int, error) {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, fmt.Errorf("no response: %w", err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(raw, "HEAD ") {
		return resp.StatusCode, nil
	}
	if resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 {
		return 0, fmt.Errorf("unframed response (status %d): neither Content-Length nor chunked", resp.StatusCode)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, fmt.Errorf("reading body of %d: %w", resp.StatusCode, err)
	}
	return resp.StatusCode, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
