package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// The strings docs tutorials and Istio's test scripts grep for.
func TestPageStringsByReviewsVersion(t *testing.T) {
	tests := []struct {
		st        *stack
		version   string
		stars     int // full stars: Reviewer1 5 + Reviewer2 4
		colour    string
		forbidden []string
	}{
		{stackV1, "v1", 0, "", []string{"glyphicon glyphicon-star", "Ratings service is currently unavailable"}},
		{stackV2, "v2", 9, "black", []string{`color="red"`, "Ratings service is currently unavailable"}},
		{stackV3, "v3", 9, "red", []string{`color="black"`, "Ratings service is currently unavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			st := tt.st.need(t)
			code, landing := get(t, client, st.url("productpage", "/"))
			if code != 200 || !strings.Contains(landing, "<title>Simple Bookstore App</title>") {
				t.Errorf("GET / = %d, title missing", code)
			}
			for _, link := range []string{"/productpage?u=normal", "/productpage?u=test"} {
				if !strings.Contains(landing, link) {
					t.Errorf("landing page lacks a link to %s", link)
				}
			}
			code, page := get(t, client, st.url("productpage", "/productpage"))
			if code != 200 {
				t.Fatalf("GET /productpage = %d", code)
			}
			want := []string{
				"<title>Simple Bookstore App</title>", "Book Details", "William Shakespeare",
				"Book Reviews", "Reviews served by:", fmt.Sprintf("reviews-%s-local-%d", tt.version, st.base),
				"Sign in", `name="username"`, `name="passwd"`,
			}
			if tt.colour != "" {
				want = append(want, fmt.Sprintf(`color="%s"`, tt.colour))
			}
			for _, w := range want {
				if !strings.Contains(page, w) {
					t.Errorf("/productpage (reviews %s) lacks %q", tt.version, w)
				}
			}
			for _, f := range tt.forbidden {
				if strings.Contains(page, f) {
					t.Errorf("/productpage (reviews %s) contains %q", tt.version, f)
				}
			}
			if n := strings.Count(page, "glyphicon glyphicon-star"); n != tt.stars {
				t.Errorf("reviews %s: %d full-star elements, want %d", tt.version, n, tt.stars)
			}
			if !strings.Contains(page, `action="login"`) {
				t.Errorf("sign-in form does not post to login")
			}
		})
	}
}

// ratingsStandIn answers as ratings does and records the end-user header
// of every call, so the test sees what reaches ratings.
type ratingsStandIn struct {
	mu       sync.Mutex
	endUsers []string
	listener net.Listener
	srv      *http.Server
}

func startRatingsStandIn(t *testing.T, port int) *ratingsStandIn {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("ratings stand-in on %d: %v", port, err)
	}
	r := &ratingsStandIn{listener: l}
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.endUsers = append(r.endUsers, req.Header.Get("end-user"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":0,"ratings":{"Reviewer1":5,"Reviewer2":4}}`)
	})}
	go r.srv.Serve(l)
	t.Cleanup(func() { r.srv.Close() })
	return r
}

func (r *ratingsStandIn) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.endUsers...)
}

// The login flow exactly as the docs scripts run it with curl: a form POST
// without Referer, no redirect following, a cookie jar.
func TestLoginFlowReachesRatingsAsEndUser(t *testing.T) {
	st := stackLogin.need(t)
	ratings := startRatingsStandIn(t, st.port("ratings"))
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: client.Timeout, CheckRedirect: client.CheckRedirect}

	// An incoming end-user header is not trusted: only the session counts.
	req, _ := http.NewRequest(http.MethodGet, st.url("productpage", "/productpage"), nil)
	req.Header.Set("end-user", "mallory")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, u := range ratings.seen() {
		if u != "" {
			t.Errorf("anonymous page sent end-user %q to ratings", u)
		}
	}

	resp, err = c.PostForm(st.url("productpage", "/login"), url.Values{"username": {"jason"}, "passwd": {"password"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("POST /login = %d, want 302", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); !strings.HasSuffix(loc, "/productpage") {
		t.Errorf("login redirects to %q, want /productpage", loc)
	}
	set := resp.Header.Get("Set-Cookie")
	if !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "Path=/") {
		t.Errorf("session cookie %q lacks HttpOnly or Path=/", set)
	}
	before := len(ratings.seen())
	code, page := get(t, c, st.url("productpage", "/productpage"))
	if code != 200 || !strings.Contains(page, "jason") || !strings.Contains(page, "Sign out") {
		t.Fatalf("logged-in page: %d, jason or Sign out missing", code)
	}
	seen := ratings.seen()[before:]
	if len(seen) == 0 || seen[len(seen)-1] != "jason" {
		t.Errorf("end-user headers reaching ratings after login: %q, want jason", seen)
	}

	resp, err = c.Get(st.url("productpage", "/logout"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("GET /logout = %d, want 302", resp.StatusCode)
	}
	_, page = get(t, c, st.url("productpage", "/productpage"))
	if strings.Contains(page, "Sign out") || !strings.Contains(page, "Sign in") {
		t.Errorf("after logout the page still shows a signed-in user")
	}
}

func TestUserNameIsEscaped(t *testing.T) {
	st := stackLogin.need(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: client.Timeout, CheckRedirect: client.CheckRedirect}
	resp, err := c.PostForm(st.url("productpage", "/login"), url.Values{"username": {"<script>alert(1)</script>"}, "passwd": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, page := get(t, c, st.url("productpage", "/productpage"))
	if strings.Contains(page, "<script>alert(1)</script>") {
		t.Error("user name rendered as markup")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("escaped user name not shown")
	}
}

// The API routes pass the backends' JSON through.
func TestProductAPIs(t *testing.T) {
	st := stackV2.need(t)
	tests := []struct {
		path string
		want string
	}{
		{"/api/v1/products/0", `"ISBN-13":"123-1234567890"`},
		{"/api/v1/products/0/reviews", `"reviewer":"Reviewer1"`},
		{"/api/v1/products/0/ratings", `"Reviewer2":4`},
		{"/api/v1/products", `"The Comedy of Errors"`},
	}
	for _, tt := range tests {
		code, body := get(t, client, st.url("productpage", tt.path))
		if code != 200 || !strings.Contains(strings.ReplaceAll(body, ": ", ":"), tt.want) {
			t.Errorf("GET %s = %d %s, want 200 with %s", tt.path, code, body, tt.want)
		}
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Errorf("GET %s: not JSON: %v", tt.path, err)
		}
	}
}
