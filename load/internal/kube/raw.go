package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxBody bounds an answer read whole (a pod's metrics page is well under).
const maxBody = 32 << 20

// do sends GET path (with query) with an Accept header and returns the
// body of a 200 answer.
func (a *API) do(ctx context.Context, path string, query url.Values, accept string) ([]byte, error) {
	t := a.Timeout
	if t <= 0 {
		t = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	u := a.Base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := a.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, &StatusError{URL: u, Code: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return b, nil
}

// StatusError is an answer other than 200.
type StatusError struct {
	URL  string
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d: %s", e.URL, e.Code, e.Body)
}

// GetText fetches path whole, as it comes (Accept */*): a pod's metrics through the pod proxy
// (PodProxyPath), for instance.
func (a *API) GetText(ctx context.Context, path string) ([]byte, error) {
	return a.do(ctx, path, nil, "*/*")
}

// PodProxyPath is where the API server proxies to a pod's port: the path
// after it (e.g. /metrics) is appended by the caller.
func PodProxyPath(namespace, pod string, port int) string {
	return fmt.Sprintf("/api/v1/namespaces/%s/pods/%s:%d/proxy", url.PathEscape(namespace), url.PathEscape(pod), port)
}
