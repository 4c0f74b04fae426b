package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// smuggled is the request hidden in a body: a server that frames the body
// differently from a front proxy would execute it.
const smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

// A POST route (or a route that answers POST with 405) of each service.
var postPaths = map[string]string{"productpage": "/login", "details": "/details/0", "reviews": "/reviews/0", "ratings": "/ratings/0"}

// framingCase is a request whose body framing is ambiguous or invalid. head
// is the header lines after Host (each ending in CRLF, without the blank
// line), body what follows the blank line; "%d" in head is replaced by
// len(body). Every case must be refused with a 400 (or 501 where ok501)
// and the connection closed, so the request in the body is never answered.
type framingCase struct {
	name, head, body string
	ok501            bool // an unknown transfer coding: 501 is allowed too (RFC 9112 6.1)
	// bodyOnly: the head is valid, only the chunked body is not; a route that
	// reads no body may answer before it is judged (405 on a GET-only route),
	// then close, as the wire table's bad-chunk rows say.
	bodyOnly bool
	tooLarge bool // a length no body limit allows: 413 is allowed too
	http10   bool // sent as HTTP/1.0, which has no Transfer-Encoding (RFC 9112 6.1)
}

var framingCases = []framingCase{
	{name: "Content-Length and Transfer-Encoding", head: "Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", body: "0\r\n\r\n" + smuggled},
	{name: "Transfer-Encoding and Content-Length", head: "Transfer-Encoding: chunked\r\nContent-Length: %d\r\n", body: "0\r\n\r\n" + smuggled},
	{name: "two conflicting Content-Length", head: "Content-Length: 0\r\nContent-Length: %d\r\n", body: smuggled},
	{name: "two equal Content-Length", head: "Content-Length: 5\r\nContent-Length: 5\r\n", body: "hello" + smuggled},
	{name: "Content-Length list 5, 40", head: "Content-Length: 5, 40\r\n", body: "hello" + smuggled},
	{name: "Content-Length -1", head: "Content-Length: -1\r\n", body: smuggled},
	{name: "Content-Length 5abc", head: "Content-Length: 5abc\r\n", body: "hello" + smuggled},
	{name: "Content-Length 0x5", head: "Content-Length: 0x5\r\n", body: "hello" + smuggled},
	{name: "Content-Length +5", head: "Content-Length: +5\r\n", body: "hello" + smuggled},
	{name: "Content-Length 1 0", head: "Content-Length: 1 0\r\n", body: "h" + smuggled},
	{name: "Transfer-Encoding folded onto the next line", head: "Transfer-Encoding:\r\n chunked\r\nContent-Length: %d\r\n", body: "0\r\n\r\n" + smuggled},
	{name: "Transfer-Encoding after a vertical tab", head: "Transfer-Encoding: \x0bchunked\r\nContent-Length: %d\r\n", body: "0\r\n\r\n" + smuggled, ok501: true},
	{name: "Transfer-Encoding with a space before the colon", head: "Transfer-Encoding : chunked\r\nContent-Length: %d\r\n", body: "0\r\n\r\n" + smuggled},
	{name: "Transfer-Encoding twice", head: "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", body: "0\r\n\r\n0\r\n\r\n" + smuggled, ok501: true},
	{name: "Transfer-Encoding chunked, identity", head: "Transfer-Encoding: chunked, identity\r\nContent-Length: %d\r\n", body: "0\r\n\r\n" + smuggled, ok501: true},
	{name: "Transfer-Encoding gzip, chunked", head: "Transfer-Encoding: gzip, chunked\r\n", body: "0\r\n\r\n" + smuggled, ok501: true},
	{name: "Transfer-Encoding xchunked", head: "Transfer-Encoding: xchunked\r\nContent-Length: %d\r\n", body: "0\r\n\r\n" + smuggled, ok501: true},
	{name: "Transfer-Encoding identity", head: "Transfer-Encoding: identity\r\n", body: smuggled, ok501: true},
	{name: "obs-fold in another field", head: "X-Folded: a\r\n b\r\nContent-Length: 0\r\n", body: smuggled},
	{name: "chunk size 5zz", head: "Transfer-Encoding: chunked\r\n", body: "5zz\r\nhello\r\n0\r\n\r\n" + smuggled, bodyOnly: true},
	{name: "chunk size with a trailing space", head: "Transfer-Encoding: chunked\r\n", body: "5 \r\nhello\r\n0\r\n\r\n" + smuggled, bodyOnly: true},
	{name: "chunk size 0x5", head: "Transfer-Encoding: chunked\r\n", body: "0x5\r\nhello\r\n0\r\n\r\n" + smuggled, bodyOnly: true},
	{name: "chunk size -5", head: "Transfer-Encoding: chunked\r\n", body: "-5\r\nhello\r\n0\r\n\r\n" + smuggled, bodyOnly: true},
	{name: "chunk data not followed by CRLF", head: "Transfer-Encoding: chunked\r\n", body: "5\r\nhelloXY0\r\n\r\n" + smuggled, bodyOnly: true},
	{name: "bare LF in chunk lines", head: "Transfer-Encoding: chunked\r\n", body: "5\nhello\n0\n\n" + smuggled, bodyOnly: true},
	{name: "bare LF after the last chunk", head: "Transfer-Encoding: chunked\r\n", body: "5\r\nhello\r\n0\n\n" + smuggled, bodyOnly: true},
	{name: "bare LF after the chunk data", head: "Transfer-Encoding: chunked\r\n", body: "5\r\nhello\n0\r\n\r\n" + smuggled, bodyOnly: true},
	{name: "Content-Length empty", head: "Content-Length: \r\n", body: smuggled},
	{name: "Content-Length 5.0", head: "Content-Length: 5.0\r\n", body: "hello" + smuggled},
	{name: "Content-Length beyond 64 bits", head: "Content-Length: 99999999999999999999\r\n", body: "hello" + smuggled, tooLarge: true},
	{name: "Content-Length a superscript two", head: "Content-Length: \xb2\r\n", body: "hello" + smuggled},
	{name: "Transfer-Encoding folded with a tab", head: "Transfer-Encoding: identity\r\n\tchunked\r\n", body: "5\r\nhello\r\n0\r\n\r\n" + smuggled},
	{name: "Transfer-Encoding identity, chunked", head: "Transfer-Encoding: identity, chunked\r\n", body: "0\r\n\r\n" + smuggled, ok501: true},
	{name: "Transfer-Encoding chunked, chunked", head: "Transfer-Encoding: chunked, chunked\r\n", body: "0\r\n\r\n" + smuggled, ok501: true},
	{name: "Transfer-Encoding in HTTP/1.0", head: "Transfer-Encoding: chunked\r\n", body: "0\r\n\r\n" + smuggled, http10: true},
}

func (c framingCase) raw(path string) string {
	head := c.head
	if strings.Contains(head, "%d") {
		head = fmt.Sprintf(head, len(c.body))
	}
	version := "1.1"
	if c.http10 {
		version = "1.0"
	}
	return fmt.Sprintf("POST %s HTTP/%s\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n%s\r\n%s", path, version, head, c.body)
}

// TestAmbiguousFramingIsRefused sends every framingCase to every service:
// one 400 and a closed connection, never a response to the hidden request.
func TestAmbiguousFramingIsRefused(t *testing.T) {
	defer ranOpen("TestAmbiguousFramingIsRefused")
	st := stackHostile.need(t)
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			held := 0
			for _, c := range framingCases {
				r := exchange(t, st.port(svc), c.raw(postPaths[svc]), false, 3*time.Second, time.Second)
				// 411: a service that refuses every request body without a
				// Content-Length (productpage) never reads the chunks at all.
				want := []int{400, 411}
				if c.ok501 {
					want = append(want, 501)
				}
				if c.bodyOnly {
					want = append(want, 405)
				}
				if c.tooLarge {
					want = append(want, 413)
				}
				switch {
				case len(r.resps) > 1 || r.garbage != "":
					failOrKnown(t, svc+": "+c.name, "%s: %s: %v: the request in the body was answered", svc, c.name, r)
				case len(r.resps) == 1 && !slices.Contains(want, r.resps[0].status):
					failOrKnown(t, svc+": "+c.name, "%s: %s: %v; want %v and a close", svc, c.name, r, want)
				case !r.closed:
					t.Errorf("%s: %s: %v; want %v and a close", svc, c.name, r, want)
				default:
					held++
				}
			}
			t.Logf("%s refused %d of %d ambiguous framings", svc, held, len(framingCases))
		})
	}
}

// TestHugeChunkSizeIsAnsweredQuickly: a chunk size no body limit allows is
// answered (413, 411, 400, or the route's own answer without reading the
// body; 408 once the head deadline has passed) or the connection closed by
// the head deadline (plus 1 s of checking slack), never held open waiting
// for data, and the hidden request is never answered.
func TestHugeChunkSizeIsAnsweredQuickly(t *testing.T) {
	defer ranOpen("TestHugeChunkSizeIsAnsweredQuickly")
	st := stackHostile.need(t)
	sizes := []struct{ name, size string }{
		{"beyond 64 bits", "1" + strings.Repeat("0", 16)},
		{"2^64 - 1", strings.Repeat("f", 16)},
		{"1 TiB", "10000000000"},
	}
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			for _, sz := range sizes {
				name, size := sz.name, sz.size
				raw := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n%s\r\nhello\r\n0\r\n\r\n%s",
					postPaths[svc], size, smuggled)
				start := time.Now()
				r := exchange(t, st.port(svc), raw, false, hostileHeaderTimeout+time.Second, time.Second)
				switch {
				case len(r.resps) > 1 || r.garbage != "":
					t.Errorf("%s: chunk size %s (%s): %v", svc, size, name, r)
				case len(r.resps) == 0 && !r.closed:
					failOrKnown(t, svc+": huge chunk size", "%s: chunk size %s (%s): nothing within %v, connection still open", svc, size, name, time.Since(start).Round(time.Millisecond))
				case len(r.resps) == 1 && r.resps[0].status < 400:
					t.Errorf("%s: chunk size %s (%s): %v: a body that never arrived was accepted", svc, size, name, r)
				}
			}
		})
	}
}
