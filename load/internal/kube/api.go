// Package kube is the little of the Kubernetes API that bookload needs, over
// plain HTTP and JSON through an API server proxy (`kubectl proxy`, which
// bookload starts itself or is given): namespaces by label selector, nodes,
// pods by label selector, and a GET of any path (package clustercost reads
// each node's kubelet summary with it). No client library: a scale run reaches everything
// through the one proxy, the same way it reaches the load clients (the API
// server's service proxy).
package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// API is an API server reached without authentication of our own: a
// `kubectl proxy` (it adds the credentials) at Base, http://127.0.0.1:PORT.
type API struct {
	Base   string
	Client *http.Client // nil: a client with Timeout
	// Timeout bounds each call; 0 means 30 s.
	Timeout time.Duration
}

// ParseBase checks a --api value: an http(s) URL with a host and no query.
func ParseBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--api %q: want the URL of an API server proxy, e.g. http://127.0.0.1:8001 (kubectl proxy)", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

func (a *API) client() *http.Client {
	if a.Client != nil {
		return a.Client
	}
	return http.DefaultClient
}

// Get fetches path (with query) and decodes the JSON answer into out.
func (a *API) Get(ctx context.Context, path string, query url.Values, out any) error {
	b, err := a.do(ctx, path, query, "application/json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		u := a.Base + path
		if len(query) > 0 {
			u += "?" + query.Encode()
		}
		return fmt.Errorf("GET %s: not the JSON expected: %w", u, err)
	}
	return nil
}

// Object is the part of an object's metadata bookload reads.
type Object struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type list struct {
	Items []struct {
		Metadata Object `json:"metadata"`
	} `json:"items"`
}

func (a *API) list(ctx context.Context, path, selector string) ([]Object, error) {
	q := url.Values{}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	var l list
	if err := a.Get(ctx, path, q, &l); err != nil {
		return nil, err
	}
	out := make([]Object, len(l.Items))
	for i, it := range l.Items {
		out[i] = it.Metadata
	}
	return out, nil
}

// Namespaces lists the namespaces matching a label selector, in natural
// order of their names (scale-2 before scale-10).
func (a *API) Namespaces(ctx context.Context, selector string) ([]Object, error) {
	ns, err := a.list(ctx, "/api/v1/namespaces", selector)
	if err != nil {
		return nil, err
	}
	sort.Slice(ns, func(i, j int) bool { return NaturalLess(ns[i].Name, ns[j].Name) })
	return ns, nil
}

// Nodes lists the nodes' names.
func (a *API) Nodes(ctx context.Context) ([]string, error) {
	ns, err := a.list(ctx, "/api/v1/nodes", "")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Name
	}
	sort.Strings(names)
	return names, nil
}

// Pods lists the pods of all namespaces matching a label selector.
func (a *API) Pods(ctx context.Context, selector string) ([]Object, error) {
	return a.list(ctx, "/api/v1/pods", selector)
}

// ServiceProxyPath is where the API server proxies to a Service's port:
// service is NAME:PORT (fortio:8080).
func ServiceProxyPath(namespace, service string) string {
	return "/api/v1/namespaces/" + url.PathEscape(namespace) + "/services/" + service + "/proxy"
}

// NaturalLess orders strings with their digit runs compared as numbers.
func NaturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, _ := strconv.ParseUint(a[:da], 10, 64)
			nb, _ := strconv.ParseUint(b[:db], 10, 64)
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	n := 0
	for n < len(s) && n < 18 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
