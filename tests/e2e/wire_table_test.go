package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The wire rules are written once, as the table under "Wire rules" in
// docs/contract.md; this file reads that table and holds every service to
// each row, so the document is the specification and this is its test.

// wireRow is one row of the table.
type wireRow struct {
	line     int    // in docs/contract.md
	input    string // the class of input, the row's name
	request  string // the bytes sent
	status   int    // the answer's status; 0 for none
	deadline bool   // the answer (or the close) comes only at the head deadline
	limit    bool   // sent while the connection limit is full
	kept     bool   // the connection stays open, else it closes after the answer
}

func (r wireRow) String() string { return fmt.Sprintf("docs/contract.md:%d %q", r.line, r.input) }

var (
	repeatRE = regexp.MustCompile(`\{(.)\*(\d+)\}`)
	answerRE = regexp.MustCompile(`^(\d{3}|none)( at the head deadline| once a held connection closes)?$`)
)

// readWireTable parses the table under the "Wire rules" heading of path.
func readWireTable(path string) ([]wireRow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []wireRow
	in, header := false, 0
	for i, line := range strings.Split(string(b), "\n") {
		ln := i + 1
		if strings.HasPrefix(line, "#") {
			in = strings.Contains(line, "Wire rules")
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			if in && len(rows) > 0 {
				break // the first line after the table ends it
			}
			continue
		}
		if header < 2 { // the column names and the separator
			header++
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 5 {
			return nil, fmt.Errorf("%s:%d: %d cells, want 5 (Input, Request, Answer, Then, Why)", path, ln, len(cells))
		}
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		row := wireRow{line: ln, input: cells[0]}
		switch req := cells[1]; {
		case req == "nothing":
		case len(req) >= 2 && req[0] == '`' && req[len(req)-1] == '`':
			s, err := strconv.Unquote(`"` + req[1:len(req)-1] + `"`)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: Request %s: %w", path, ln, req, err)
			}
			row.request = repeatRE.ReplaceAllStringFunc(s, func(m string) string {
				sub := repeatRE.FindStringSubmatch(m)
				n, _ := strconv.Atoi(sub[2])
				return strings.Repeat(sub[1], n)
			})
		default:
			return nil, fmt.Errorf("%s:%d: Request %q: want `bytes` or nothing", path, ln, req)
		}
		m := answerRE.FindStringSubmatch(cells[2])
		if m == nil {
			return nil, fmt.Errorf("%s:%d: Answer %q: want a status or none, optionally %q or %q",
				path, ln, cells[2], "at the head deadline", "once a held connection closes")
		}
		if m[1] != "none" {
			row.status, _ = strconv.Atoi(m[1])
		}
		row.deadline = m[2] == " at the head deadline"
		row.limit = m[2] == " once a held connection closes"
		switch cells[3] {
		case "kept":
			row.kept = true
		case "closed":
		default:
			return nil, fmt.Errorf("%s:%d: Then %q: want kept or closed", path, ln, cells[3])
		}
		if row.kept && (row.deadline || row.status == 0) {
			return nil, fmt.Errorf("%s:%d: a connection kept after %q cannot be checked", path, ln, cells[2])
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no table under a \"Wire rules\" heading", path)
	}
	return rows, nil
}

// TestWireTable sends every row of the contract's wire table to every
// service (BOOKINFO_E2E_APPS narrows them, see tests/e2e/README.md) and
// checks that each answers as the row says. A service's rows go out at
// once, each on a connection of its own; the rows that fill the connection
// limit come after the others, since they stall the service.
func TestWireTable(t *testing.T) {
	defer ranOpen("TestWireTable")
	rows, err := readWireTable(filepath.Join(repoRoot, "docs", "contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	st := stackHostile.need(t)
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			port := st.port(svc)
			var wg sync.WaitGroup
			whys := make([]string, len(rows))
			for i, row := range rows {
				if row.limit {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					whys[i] = checkWireRow(port, row)
				}()
			}
			wg.Wait()
			for i, row := range rows {
				if row.limit {
					held := fillConnections(t, port)
					whys[i] = checkWireRow(port, row)
					for _, c := range held {
						c.Close()
					}
				}
				if whys[i] != "" {
					failOrKnown(t, svc+": "+row.input, "%s, %s: %s", row, svc, whys[i])
				}
			}
		})
	}
}

// checkWireRow sends row to port and says how the answer differs from the
// row's, or "" when it does not.
func checkWireRow(port int, row wireRow) string {
	raw := row.request
	first, quiet := 3*time.Second, time.Second
	switch {
	case row.deadline:
		first = hostileHeaderTimeout + 2*time.Second
	case row.limit:
		first = 2*hostileHeaderTimeout + 2*time.Second
	}
	if !row.deadline {
		// A request pipelined behind: answered if the connection is kept,
		// never if it closes.
		raw += pipelinedHealth
	}
	r, err := tryExchange(port, raw, false, first, quiet)
	if err != nil {
		return err.Error()
	}
	want := []int{row.status}
	if row.status == 0 {
		want = nil
	}
	if row.kept {
		want = append(want, 200)
	}
	var got []int
	for _, p := range r.resps {
		got = append(got, p.status)
	}
	switch {
	case r.garbage != "":
		return fmt.Sprintf("%v: not an HTTP/1.x answer", r)
	case fmt.Sprint(got) != fmt.Sprint(want):
		return fmt.Sprintf("%v; want answers %v", r, want)
	case row.kept && r.closed:
		return fmt.Sprintf("%v; want the connection kept", r)
	case !row.kept && !r.closed:
		return fmt.Sprintf("%v; want the connection closed after the answer", r)
	case row.deadline && r.wait < hostileHeaderTimeout-500*time.Millisecond:
		return fmt.Sprintf("%v; want it at the head deadline (%v), not before", r, hostileHeaderTimeout)
	case row.limit && r.wait < hostileHeaderTimeout/2:
		return fmt.Sprintf("%v; want it only once a held connection closes (the limit was full)", r)
	}
	return ""
}

// fillConnections opens as many connections to port as its connection
// limit admits, sending nothing on them, so that the next connection is
// beyond the limit; they close at the head deadline.
func fillConnections(t *testing.T, port int) []net.Conn {
	t.Helper()
	n := hostileMaxConns - heldConnections(port)
	cs := make([]net.Conn, n)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
			if err == nil {
				cs[i] = c
			}
		}()
	}
	wg.Wait()
	var open []net.Conn
	for _, c := range cs {
		if c != nil {
			open = append(open, c)
		}
	}
	if len(open) < n {
		t.Fatalf("only %d of %d connections could be made", len(open), n)
	}
	// Let the service accept them before the row's connection comes.
	time.Sleep(300 * time.Millisecond)
	return open
}
