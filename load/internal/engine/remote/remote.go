// Package remote is what the engines that drive a load client somewhere
// else share (agentengine: a bookload agent; fortiorest: a fortio server):
// the grammar of their target URLs, the in-cluster base URL the client
// loads, and the HTTP calls to the client's API (start or run, poll its
// status, fetch the result, stop a run through fortio's REST API).
//
// Target URL grammar, PREFIX being "bookload" or "fortio":
//
//	PREFIX+http://HOST:PORT[/PATH][?url=IN_CLUSTER_BASE_URL]
//	PREFIX+https://...
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// APITimeout bounds the calls that do not wait for load.
const APITimeout = 10 * time.Second

// DefaultPoll is the status polling interval when an engine sets none.
const DefaultPoll = 250 * time.Millisecond

// Target is a parsed PREFIX+http(s) target URL.
type Target struct {
	// URL is the target URL as parsed: its Host, and its path (the
	// client's UI path or a proxy's prefix, as each engine reads it).
	URL *url.URL
	// Scheme is http or https: how bookload reaches the client.
	Scheme string
	// Base is the in-cluster base URL given with ?url=, "" for the default.
	Base string
}

// Parse reads a PREFIX+http(s) target URL; kind names the client in
// errors ("agent", "fortio").
func Parse(raw, prefix, kind string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("%s target URL %q: %w", kind, raw, err)
	}
	scheme, ok := strings.CutPrefix(u.Scheme, prefix+"+")
	if !ok || (scheme != "http" && scheme != "https") {
		return Target{}, fmt.Errorf("%s target URL %q: scheme must be %s+http or %s+https", kind, raw, prefix, prefix)
	}
	if u.Host == "" {
		return Target{}, fmt.Errorf("%s target URL %q: no %s host, e.g. %s+http://127.0.0.1:8080", kind, raw, kind, prefix)
	}
	if u.Fragment != "" || u.User != nil {
		return Target{}, fmt.Errorf("%s target URL %q: no user or fragment allowed", kind, raw)
	}
	t := Target{URL: u, Scheme: scheme}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Target{}, fmt.Errorf("%s target URL %q: query: %w", kind, raw, err)
	}
	for k, v := range q {
		if k != "url" || len(v) != 1 {
			return Target{}, fmt.Errorf("%s target URL %q: the only query parameter is url=IN_CLUSTER_BASE_URL, once", kind, raw)
		}
		b, err := url.Parse(v[0])
		if err != nil || (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" || b.RawQuery != "" || b.Fragment != "" {
			return Target{}, fmt.Errorf("%s target URL %q: url=%q must be an http(s) base URL with a host and no query, e.g. url=http://details.bookinfo-ambient:9080", kind, raw, v[0])
		}
		t.Base = strings.TrimRight(v[0], "/")
	}
	return t, nil
}

// LoadBase is the base URL the client loads for a scenario's service:
// base (from ?url=), or by default the Service of that name in the client's
// own namespace (loadtarget.InClusterBase).
func LoadBase(base, service string) string {
	if base != "" {
		return base
	}
	return loadtarget.InClusterBase(service)
}

// Client calls a load client's HTTP API.
type Client struct {
	// API is the base URL the paths are appended to.
	API string
	// HTTP makes the calls; nil means http.DefaultClient.
	HTTP *http.Client
}

// Call sends a GET of API+path?query, or with a body a POST of it as JSON,
// bounded by timeout, and returns the answer's status and body whatever the
// status: each engine reads its client's error answers its own way.
func (c Client) Call(ctx context.Context, timeout time.Duration, path string, query url.Values, body any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := c.API + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		method, rd = http.MethodPost, bytes.NewReader(b)
	}
	hr, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, data, nil
}

// StopFortioRun asks fortio's REST API under uiPath (a fortio server's, or
// the agent's, which lists its runs there) to stop run runID and waits,
// within timeout, for it to end. It is best effort: the run may be over.
func (c Client) StopFortioRun(timeout time.Duration, uiPath, runID string) {
	_, _, _ = c.Call(context.Background(), timeout, uiPath+"rest/stop", url.Values{"runid": {runID}, "wait": {"on"}}, nil)
}
