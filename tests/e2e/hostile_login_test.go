package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestLoginBoundsItsInput: the user name lands in a cookie and in every
// page of the session, so it is bounded (256 bytes), and so is the form.
// Raw sockets: a server may answer 413 before reading a large body.
func TestLoginBoundsItsInput(t *testing.T) {
	st := stackHostile.need(t)
	port := st.port("productpage")
	cases := []struct {
		name, query, body string
		want              int
	}{
		{"256-byte user name", "", url.Values{"username": {strings.Repeat("u", 256)}, "passwd": {"x"}}.Encode(), 302},
		{"257-byte user name", "", url.Values{"username": {strings.Repeat("u", 257)}, "passwd": {"x"}}.Encode(), 400},
		{"9 KB user name", "", url.Values{"username": {strings.Repeat("u", 9000)}, "passwd": {"x"}}.Encode(), 400},
		{"257-byte user name in the query", "?username=" + strings.Repeat("q", 257), "passwd=x", 400},
		{"20 KB form", "", url.Values{"username": {"jason"}, "passwd": {strings.Repeat("p", 20<<10)}}.Encode(), 413},
		{"5 MB user name", "", url.Values{"username": {strings.Repeat("u", 5<<20)}, "passwd": {"x"}}.Encode(), 413},
	}
	for _, c := range cases {
		raw := fmt.Sprintf("POST /login%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			c.query, port, len(c.body), c.body)
		r := exchange(t, port, raw, false, 5*time.Second, time.Second)
		if len(r.resps) != 1 || r.resps[0].status != c.want {
			t.Errorf("POST /login with a %s: %v; want one %d", c.name, r, c.want)
			continue
		}
		if c.want != 302 && r.resps[0].header.Get("Set-Cookie") != "" {
			t.Errorf("POST /login with a %s: refused, yet sets a cookie %q", c.name, truncate(r.resps[0].header.Get("Set-Cookie"), 80))
		}
	}
}

// TestStaticPathEscapeIsJSON404: a path that leaves /static is the
// contract's JSON 404, not a redirect built from the client's Host.
func TestStaticPathEscapeIsJSON404(t *testing.T) {
	st := stackHostile.need(t)
	for _, path := range []string{"/static//etc/passwd", "/static/../../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd"} {
		raw := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", path)
		r := exchange(t, st.port("productpage"), raw, false, 3*time.Second, time.Second)
		if len(r.resps) != 1 {
			t.Errorf("GET %s: %v", path, r)
			continue
		}
		p := r.resps[0]
		if ct := p.header.Get("Content-Type"); p.status != 404 || !strings.HasPrefix(ct, "application/json") || strings.TrimSpace(p.body) != `{"error":"not found"}` {
			t.Errorf("GET %s: %d %q %q; want 404 application/json {\"error\":\"not found\"}", path, p.status, ct, truncate(p.body, 100))
		}
		if loc := p.header.Get("Location"); loc != "" {
			t.Errorf("GET %s: Location %q", path, loc)
		}
	}
}

// TestLoginRedirectStaysOnSite: login and logout redirect to the Referer's
// path when the Referer is this site, to /productpage otherwise.
func TestLoginRedirectStaysOnSite(t *testing.T) {
	st := stackHostile.need(t)
	base := st.url("productpage", "")
	self := strings.TrimPrefix(base, "http://")
	cases := []struct{ referer, want string }{
		{"", "/productpage"},
		{base + "/productpage?u=test", "/productpage?u=test"},
		{base + "/", "/"},
		{"http://evil.example/productpage?u=test", "/productpage"},
		{"https://evil.example/", "/productpage"},
		{"//evil.example/x", "/productpage"},
		{"http://" + self + "@evil.example/x", "/productpage"},
		{"javascript:alert(1)", "/productpage"},
		{"/\\evil.example/x", "/productpage"},
	}
	for _, c := range cases {
		for _, how := range []string{"login", "logout"} {
			var req *http.Request
			if how == "login" {
				req, _ = http.NewRequest(http.MethodPost, base+"/login", strings.NewReader("username=jason&passwd=x"))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			} else {
				req, _ = http.NewRequest(http.MethodGet, base+"/logout", nil)
			}
			if c.referer != "" {
				req.Header.Set("Referer", c.referer)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("%s with Referer %q: %v", how, c.referer, err)
				continue
			}
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusFound || !sameSiteLocation(loc, self, c.want) {
				t.Errorf("%s with Referer %q: %d Location %q; want 302 to %s on this site", how, c.referer, resp.StatusCode, loc, c.want)
			}
		}
	}
}

// sameSiteLocation says loc leads to path on host self: the path itself, or
// an absolute URL of self with that path.
func sameSiteLocation(loc, self, path string) bool {
	if loc == path {
		return true
	}
	u, err := url.Parse(loc)
	return err == nil && (u.Scheme == "http" || u.Scheme == "") && u.Host == self && u.User == nil && u.RequestURI() == path && strings.HasPrefix(loc, "http://"+self+"/")
}
