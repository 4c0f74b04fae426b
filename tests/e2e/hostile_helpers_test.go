package e2e

// Shared raw-socket helpers of the hostile-input suite (hostile_*_test.go):
// requests written byte for byte on loopback, every answer collected until
// the server closes or falls silent, and the resident memory of a service's
// process group read from /proc. Checks that only wait on sockets run the
// four services in parallel subtests; the slow-client checks, which read
// memory and load the machine, one service after another.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The knobs of stackHostile: a short head deadline so that slow-head checks
// finish in seconds, and a connection limit a flood can exceed.
const (
	hostileHeaderTimeout = 2 * time.Second
	hostileMaxConns      = 64
)

// allServices are the four services; services those the cross-service
// checks (the wire table, hostile_*_test.go) run against: all four, or
// those BOOKINFO_E2E_APPS names (comma-separated), for quick feedback on one.
var (
	allServices           = []string{"productpage", "details", "reviews", "ratings"}
	services, servicesErr = appsUnderTest(os.Getenv("BOOKINFO_E2E_APPS"))
)

func appsUnderTest(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return allServices, nil
	}
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(allServices, name) {
			return nil, fmt.Errorf("BOOKINFO_E2E_APPS=%q: %q is not one of %s", list, name, strings.Join(allServices, ", "))
		}
		out = append(out, name)
	}
	return out, nil
}

func hostileArgs() []string {
	var args []string
	for _, svc := range services {
		args = append(args,
			"--set", fmt.Sprintf("%s.HTTP_HEADER_TIMEOUT_SECONDS=%d", svc, int(hostileHeaderTimeout/time.Second)),
			"--set", fmt.Sprintf("%s.HTTP_MAX_CONNECTIONS=%d", svc, hostileMaxConns))
	}
	return args
}

// response is one response read off a raw connection.
type response struct {
	status int
	header http.Header
	body   string
	close  bool // the response said Connection: close
}

// exchangeResult is everything a server sent back on one connection.
type exchangeResult struct {
	resps   []response
	closed  bool          // the server closed the connection (EOF or reset)
	garbage string        // bytes that are not an HTTP/1.x response (e.g. an HTTP/0.9 bare body)
	wait    time.Duration // from the end of the write to the close, the garbage or the last response
	werr    error         // the write failed (the server may close before reading everything)
}

func (r exchangeResult) String() string {
	var parts []string
	for _, p := range r.resps {
		parts = append(parts, fmt.Sprintf("%d %q", p.status, truncate(p.body, 80)))
	}
	s := fmt.Sprintf("%d response(s) [%s]", len(r.resps), strings.Join(parts, ", "))
	switch {
	case r.garbage != "":
		s += fmt.Sprintf(", then non-HTTP bytes %q", truncate(r.garbage, 80))
	case r.closed:
		s += ", then closed"
	case len(r.resps) == 0:
		return s + ", connection left open"
	default:
		s += ", connection left open"
	}
	return s + fmt.Sprintf(" after %v", r.wait.Round(time.Millisecond))
}

// exchange writes raw to port on a new connection (half-closing it when
// halfClose is set) and reads responses until the server closes, sends
// something that is not a response, or stays silent: for first before the
// first response (a cold JVM may take a while), for quiet after each one.
// It reads at most ten responses.
func exchange(t *testing.T, port int, raw string, halfClose bool, first, quiet time.Duration) exchangeResult {
	t.Helper()
	res, err := tryExchange(port, raw, halfClose, first, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// tryExchange is exchange for a goroutine other than the test's: it
// returns the error of the dial instead of failing the test.
func tryExchange(port int, raw string, halfClose bool, first, quiet time.Duration) (exchangeResult, error) {
	var res exchangeResult
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
	if err != nil {
		return res, fmt.Errorf("dial %d: %w", port, err)
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		res.werr = err
	}
	if halfClose {
		conn.(*net.TCPConn).CloseWrite()
	}
	start := time.Now()
	br := bufio.NewReader(conn)
	for wait := first; len(res.resps) < 10; wait = quiet {
		conn.SetReadDeadline(time.Now().Add(wait))
		// Peek first: tells a silent server from a closed one, and bytes
		// that do not start a status line from a response.
		head, err := br.Peek(5)
		if err != nil {
			if isTimeout(err) {
				return res, nil
			}
			res.closed = true
			res.garbage = string(head)
			res.wait = time.Since(start)
			return res, nil
		}
		if string(head) != "HTTP/" {
			rest, _ := io.ReadAll(io.LimitReader(br, 200))
			res.garbage = string(head) + string(rest)
			res.wait = time.Since(start)
			return res, nil
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			res.garbage = "unparsable response: " + err.Error()
			res.wait = time.Since(start)
			return res, nil
		}
		body, berr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		res.resps = append(res.resps, response{status: resp.StatusCode, header: resp.Header, body: string(body), close: resp.Close})
		res.wait = time.Since(start)
		if berr != nil {
			res.closed = !isTimeout(berr)
			return res, nil
		}
	}
	return res, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// groupRSSkB sums VmRSS over every live process of process group pgid:
// each service of a `bookload local` stack is a group of its own
// (gunicorn's master and workers, the JVM, node, ruby).
func groupRSSkB(pgid int) int64 {
	var sum int64
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	want := strconv.Itoa(pgid)
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 3 || fields[0] == "Z" || fields[2] != want {
			continue
		}
		status, err := os.ReadFile(filepath.Join(filepath.Dir(f), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				if fs := strings.Fields(rest); len(fs) > 0 {
					n, _ := strconv.ParseInt(fs[0], 10, 64)
					sum += n
				}
			}
		}
	}
	return sum
}

// rssWatch samples a group's RSS every 200 ms until stopped and keeps the peak.
type rssWatch struct {
	stop chan struct{}
	done chan int64
}

func watchRSS(pgid int) *rssWatch {
	w := &rssWatch{stop: make(chan struct{}), done: make(chan int64, 1)}
	go func() {
		peak := groupRSSkB(pgid)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				w.done <- max(peak, groupRSSkB(pgid))
				return
			case <-tick.C:
				peak = max(peak, groupRSSkB(pgid))
			}
		}
	}()
	return w
}

// peakKB stops the watch and returns the highest reading.
func (w *rssWatch) peakKB() int64 {
	close(w.stop)
	return <-w.done
}

// healthWithin asks svc for /health on a new connection and says whether a
// 200 came within d, with what went wrong otherwise.
func healthWithin(port int, d time.Duration) (bool, string) {
	c := &http.Client{Timeout: d, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/health", port))
	if err != nil {
		return false, fmt.Sprintf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Sprintf("status %d", resp.StatusCode)
	}
	return true, ""
}

// healthBy asks for /health on new connections, again whenever one is
// refused, closed or times out, until a 200 or until d has passed; it
// returns how long the first 200 took.
func healthBy(port int, d time.Duration) (time.Duration, bool, string) {
	start := time.Now()
	var why string
	for time.Since(start) < d {
		ok, w := healthWithin(port, d-time.Since(start))
		if ok {
			return time.Since(start), true, ""
		}
		why = w
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start), false, why
}

// rssGrowthMB bounds how much a service's resident memory may grow during
// one attack of the suite: the request-processing state of the attack's
// connections, not a copy of every response. reviews' JVM may also grow
// its heap from -Xms64m towards -Xmx128m under any load.
var rssGrowthMB = map[string]int64{"productpage": 64, "details": 64, "reviews": 160, "ratings": 64}

// heldConnections counts the established TCP connections whose local port
// is port (the server's side of each connection to it, from /proc/net/tcp
// and tcp6): connections a service already holds against its
// HTTP_MAX_CONNECTIONS, e.g. productpage's pooled ones to details.
func heldConnections(port int) int {
	n := 0
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st ...; addresses are HEXIP:HEXPORT, st 01 is ESTABLISHED.
			if len(f) < 4 || f[3] != "01" {
				continue
			}
			_, p, ok := strings.Cut(f[1], ":")
			if v, err := strconv.ParseUint(p, 16, 16); ok && err == nil && int(v) == port {
				n++
			}
		}
	}
	return n
}
