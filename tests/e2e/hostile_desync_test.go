package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Header lines whose length is a multiple of a 4 KiB read, or one short of
// it: WEBrick 1.8 reads header lines in 4096-byte pieces, and a line that
// ends exactly at a piece boundary ended the request head early, so the
// next line was parsed as a second request on the same connection.
var boundaryLineLengths = []int{4095, 4096, 8191, 8192}

// longLine returns a header line of exactly n bytes (without its CRLF).
func longLine(name string, n int) string {
	prefix := name + ": "
	return prefix + strings.Repeat(string(rune(strings.ToLower(name)[0])), n-len(prefix))
}

// TestLongHeaderLineIsOneRequest: a header line at a read-buffer boundary,
// followed by a line that reads as a request line, is one request with one
// response on every service (answered, or refused with a 4xx and a close),
// never two.
func TestLongHeaderLineIsOneRequest(t *testing.T) {
	st := stackHostile.need(t)
	paths := map[string]string{"productpage": "/health", "details": "/details/0", "reviews": "/reviews/0", "ratings": "/ratings/0"}
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			for _, n := range boundaryLineLengths {
				for _, second := range []string{"jwt: /health HTTP/1.1", "Authorization: /health HTTP/1.1"} {
					raw := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n%s\r\n\r\n", paths[svc], longLine("X", n), second)
					r := exchange(t, st.port(svc), raw, false, 3*time.Second, 600*time.Millisecond)
					if len(r.resps) != 1 || r.garbage != "" {
						t.Errorf("%s: %d-byte header line, then %q: %v; want exactly one response", svc, n, second, r)
					} else if r.resps[0].status >= 400 && !r.closed {
						t.Errorf("%s: %d-byte header line, then %q: %v; a refused request must close the connection", svc, n, second, r)
					}
				}
			}
		})
	}
}

// TestNoCrossClientDesyncThroughProductpage: productpage forwards Cookie and
// Authorization byte for byte to details over pooled keep-alive
// connections. 20 requests whose Cookie line sits at a 4 KiB boundary and
// whose Authorization reads as a request line are interleaved with 200
// ordinary requests for product ids no other request asks for, on other
// connections: each of the 200 must get its own id back.
func TestNoCrossClientDesyncThroughProductpage(t *testing.T) {
	st := stackHostile.need(t)
	port := st.port("productpage")
	const victims, attacks, workers = 200, 20, 8

	type job struct {
		id     int // a victim's product id; -1 for an attack
		length int // an attack's Cookie line length
	}
	var jobs []job
	for i := 0; i < victims; i++ {
		jobs = append(jobs, job{id: 1000 + i})
	}
	for i := 0; i < attacks; i++ {
		jobs = append(jobs, job{id: -1, length: boundaryLineLengths[i%len(boundaryLineLengths)]})
	}
	rng := rand.New(rand.NewSource(4096))
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })

	var mu sync.Mutex
	wrong := map[string]int{}
	var examples []string
	attackStatus := map[int]int{}
	record := func(kind, example string) {
		mu.Lock()
		defer mu.Unlock()
		wrong[kind]++
		if len(examples) < 5 {
			examples = append(examples, example)
		}
	}

	work := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker's victims share one keep-alive connection of their own.
			c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			for j := range work {
				if j.id < 0 {
					raw := fmt.Sprintf("GET /api/v1/products/0 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\nAuthorization: /health HTTP/1.1\r\nConnection: close\r\n\r\n",
						port, longLine("Cookie", j.length))
					code, err := rawRequest(port, raw)
					mu.Lock()
					if err != nil {
						attackStatus[-1]++
					} else {
						attackStatus[code]++
					}
					mu.Unlock()
					continue
				}
				resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/products/%d", port, j.id))
				if err != nil {
					record("error", fmt.Sprintf("victim %d: %v", j.id, err))
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var got struct {
					ID *int `json:"id"`
				}
				if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || got.ID == nil || *got.ID != j.id {
					record("wrong answer", fmt.Sprintf("victim %d got %d %q", j.id, resp.StatusCode, truncate(string(body), 120)))
				}
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	t.Logf("%d victims, %d attacks (statuses of the attacks, -1 = no response: %v); victims that did not get their own product: %v",
		victims, attacks, attackStatus, wrong)
	for _, e := range examples {
		t.Errorf("%s", e)
	}
	if ok, why := healthWithin(st.port("details"), 2*time.Second); !ok {
		t.Errorf("details /health after the attacks: %s", why)
	}
}
