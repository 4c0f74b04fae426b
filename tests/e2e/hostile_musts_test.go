package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestOldAndBareLFRequestLinesAreAnsweredQuickly: an HTTP/0.9 request line
// gets a 400 (or 505) with an HTTP/1.x status line, or the connection is
// closed, within 1 s: never a bare body, never a wait for more bytes. A
// request whose lines end in a bare LF (which RFC 9112 lets a server
// accept) is answered with a framed response or refused within 1 s.
func TestOldAndBareLFRequestLinesAreAnsweredQuickly(t *testing.T) {
	st := stackHostile.need(t)
	cases := []struct {
		name, raw string
		anyStatus bool
	}{
		{"HTTP/0.9 request line", "GET /health\r\n", false},
		{"HTTP/0.9 request line ended by LF", "GET /health\n", false},
		{"HTTP/0.9 request line, then a header", "GET /health\r\nHost: 127.0.0.1\r\n\r\n", false},
		{"bare LF everywhere", "GET /health HTTP/1.1\nHost: 127.0.0.1\n\n", true},
		{"bare LF after the request line", "GET /health HTTP/1.1\nHost: 127.0.0.1\r\n\r\n", true},
		{"bare LF after a header", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\n\r\n", true},
		{"bare LF after the last header", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: a\n\r\n", true},
		{"bare LF as the blank line", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\n", true},
	}
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				r := exchange(t, st.port(svc), c.raw, false, time.Second, time.Second)
				switch {
				case r.garbage != "":
					t.Errorf("%s: %s: %v: not an HTTP/1.x response", svc, c.name, r)
				case len(r.resps) == 0 && !r.closed:
					t.Errorf("%s: %s: nothing within 1 s, connection still open", svc, c.name)
				case len(r.resps) > 1:
					t.Errorf("%s: %s: %v", svc, c.name, r)
				// An HTTP/0.9 line answered as HTTP/1.0 (a status line, then a
				// close: WEBrick) is answered within the second too.
				case len(r.resps) == 1 && !c.anyStatus && !slices.Contains([]int{400, 505}, r.resps[0].status) && !r.closed:
					t.Errorf("%s: %s: %v; want 400 (or 505), or an answer and a close", svc, c.name, r)
				}
			}
		})
	}
}

// TestMust400 checks the requests RFC 9112 (3.2, 5) and RFC 9110 (5.5)
// oblige a server to refuse with 400, on every service.
func TestMust400(t *testing.T) {
	defer ranOpen("TestMust400")
	st := stackHostile.need(t)
	cases := []struct{ name, head string }{
		{"HTTP/1.1 without Host", "GET /health HTTP/1.1\r\n"},
		{"two different Host", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: example.com\r\n"},
		{"two equal Host", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n"},
		{"Host with a space", "GET /health HTTP/1.1\r\nHost: exa mple.com\r\n"},
		{"Host with a slash", "GET /health HTTP/1.1\r\nHost: example.com/x\r\n"},
		{"Host with an unclosed bracket", "GET /health HTTP/1.1\r\nHost: [::1\r\n"},
		{"Host with angle brackets", "GET /health HTTP/1.1\r\nHost: <script>\r\n"},
		{"NUL in a field value", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: a\x00b\r\n"},
		{"bare CR in a field value", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: a\rb\r\n"},
		{"NUL in the User-Agent", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: a\x00b\r\n"},
		{"whitespace before a field's colon", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test : a\r\n"},
		{"DEL in a field value", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: a\x7fb\r\n"},
		{"NUL in a field name", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX\x00: a\r\n"},
		{"a control character in a Cookie", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: a=\x01\r\n"},
		{"CR before a field's CRLF", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: a\r\r\n"},
		{"two Host in HTTP/1.0", "GET /health HTTP/1.0\r\nHost: a\r\nHost: b\r\n"},
		{"Host with userinfo", "GET /health HTTP/1.1\r\nHost: user@a\r\n"},
		{"Host with two ports", "GET /health HTTP/1.1\r\nHost: a:80:80\r\n"},
		{"Host with a port not digits", "GET /health HTTP/1.1\r\nHost: a:80a\r\n"},
		{"Host with a question mark", "GET /health HTTP/1.1\r\nHost: a?b\r\n"},
		{"Host with a bad percent-encoding", "GET /health HTTP/1.1\r\nHost: a%zz\r\n"},
		{"Host with a backslash", "GET /health HTTP/1.1\r\nHost: \\evil\r\n"},
		{"Host not ASCII", "GET /health HTTP/1.1\r\nHost: caf\xc3\xa9\r\n"},
		{"Host with a fragment", "GET /health HTTP/1.1\r\nHost: a#b\r\n"},
		{"two Host of different case", "GET /health HTTP/1.1\r\nHost: a\r\nhost: b\r\n"},
		{"ESC in a field value", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: a\x1bb\r\n"},
		{"NUL in a field name", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX\x00: a\r\n"},
	}
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				r := exchange(t, st.port(svc), c.head+"\r\n", false, 3*time.Second, time.Second)
				if len(r.resps) != 1 || r.resps[0].status != 400 || r.garbage != "" {
					failOrKnown(t, svc+": "+c.name, "%s: %s: %v; want one 400", svc, c.name, r)
				}
			}
		})
	}
}

// TestValidHostsAreServed: the Host values the grammar allows (RFC 9110
// 7.2, RFC 3986 3.2.2), an empty one included, and none in HTTP/1.0.
func TestValidHostsAreServed(t *testing.T) {
	defer ranOpen("TestValidHostsAreServed")
	st := stackHostile.need(t)
	cases := []struct{ name, host string }{
		{"empty Host", ""},
		{"Host with a port", "productpage:9080"},
		{"Host an IPv4 address", "10.0.0.1"},
		{"Host an IPv6 literal with a port", "[::1]:9080"},
		{"Host a cluster name", "ratings.bookinfo.svc.cluster.local"},
		{"Host a punycode name", "xn--caf-dma.example"},
		{"Host with a percent-encoding", "a%41b"},
	}
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				r := exchange(t, st.port(svc), "GET /health HTTP/1.1\r\nHost: "+c.host+"\r\n\r\n", false, 3*time.Second, time.Second)
				if len(r.resps) != 1 || r.resps[0].status != 200 {
					failOrKnown(t, svc+": "+c.name, "%s: %s: %v; want one 200", svc, c.name, r)
				}
			}
		})
	}
}

// TestTruncatedHeadIsNotServed: a request head cut off by the end of the
// stream (no blank line) is refused or the connection closed, never
// answered as if it were complete.
func TestTruncatedHeadIsNotServed(t *testing.T) {
	st := stackHostile.need(t)
	paths := map[string]string{"productpage": "/health", "details": "/details/0", "reviews": "/reviews/0", "ratings": "/ratings/0"}
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			for _, tail := range []string{"", "X-Test: a\r\n", "X-Test: a"} {
				raw := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s", paths[svc], tail)
				r := exchange(t, st.port(svc), raw, true, 2*time.Second, time.Second)
				for _, p := range r.resps {
					if p.status < 400 {
						t.Errorf("%s: head ending in %q, then end of stream: %v: served as a complete request", svc, tail, r)
						break
					}
				}
			}
		})
	}
}
