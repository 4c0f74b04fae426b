// Package kubetest is a stand-in for an API server proxy (`kubectl proxy`)
// on loopback, for tests: namespaces, nodes and pods with labels, each
// node's kubelet summary from a function, and the service proxy
// (/api/v1/namespaces/NS/services/NAME:PORT/proxy/...) routed to a handler
// per namespace.
package kubetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
)

// API is the fake. Set its fields before use, or under Lock.
type API struct {
	*httptest.Server
	sync.Mutex
	Namespaces []kube.Object
	Nodes      []string
	Pods       []kube.Object
	// Summary returns a node's kubelet summary (clustercost.KubeletSummary),
	// answered as JSON; nil or an error answers 500.
	Summary func(node string) (any, error)
	// Services maps "NS/NAME:PORT" to the handler the service proxy
	// forwards to, the path after .../proxy given to it.
	Services map[string]http.Handler
	// Calls counts requests by kind: namespaces, nodes, pods, summary,
	// service.
	Calls map[string]int
}

// New starts the fake; it stops when the test ends (Close).
func New() *API {
	a := &API{Services: map[string]http.Handler{}, Calls: map[string]int{}}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	return a
}

func (a *API) count(kind string) {
	a.Lock()
	a.Calls[kind]++
	a.Unlock()
}

// CallCount returns Calls[kind].
func (a *API) CallCount(kind string) int {
	a.Lock()
	defer a.Unlock()
	return a.Calls[kind]
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	sel := r.URL.Query().Get("labelSelector")
	switch {
	case p == "/api/v1/namespaces":
		a.count("namespaces")
		a.Lock()
		items := Select(a.Namespaces, sel)
		a.Unlock()
		list(w, items)
	case p == "/api/v1/nodes":
		a.count("nodes")
		a.Lock()
		var items []kube.Object
		for _, n := range a.Nodes {
			items = append(items, kube.Object{Name: n})
		}
		a.Unlock()
		list(w, items)
	case p == "/api/v1/pods":
		a.count("pods")
		a.Lock()
		items := Select(a.Pods, sel)
		a.Unlock()
		list(w, items)
	case strings.HasPrefix(p, "/api/v1/nodes/") && strings.HasSuffix(p, "/proxy/stats/summary"):
		a.count("summary")
		node := strings.TrimSuffix(strings.TrimPrefix(p, "/api/v1/nodes/"), "/proxy/stats/summary")
		var s any
		err := fmt.Errorf("no summary")
		if a.Summary != nil {
			s, err = a.Summary(node)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, s)
	case strings.HasPrefix(p, "/api/v1/namespaces/"):
		// /api/v1/namespaces/NS/services/NAME:PORT/proxy/REST
		parts := strings.SplitN(strings.TrimPrefix(p, "/api/v1/namespaces/"), "/", 5)
		if len(parts) < 4 || parts[1] != "services" || parts[3] != "proxy" {
			http.Error(w, `{"kind":"Status","message":"the server could not find the requested resource"}`, http.StatusNotFound)
			return
		}
		a.count("service")
		a.Lock()
		h := a.Services[parts[0]+"/"+parts[2]]
		a.Unlock()
		if h == nil {
			http.Error(w, fmt.Sprintf(`{"kind":"Status","message":"services \"%s\" not found"}`, parts[2]), http.StatusServiceUnavailable)
			return
		}
		rest := "/"
		if len(parts) == 5 {
			rest += parts[4]
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = rest, ""
		h.ServeHTTP(w, r2)
	default:
		http.NotFound(w, r)
	}
}

func list(w http.ResponseWriter, items []kube.Object) {
	type item struct {
		Metadata kube.Object `json:"metadata"`
	}
	out := struct {
		Items []item `json:"items"`
	}{Items: []item{}}
	for _, it := range items {
		out.Items = append(out.Items, item{it})
	}
	writeJSON(w, out)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Select filters objs by a label selector of the forms the code uses:
// k=v, k!=v, k, k in (a,b), joined by commas.
func Select(objs []kube.Object, selector string) []kube.Object {
	var out []kube.Object
	for _, o := range objs {
		if Matches(o.Labels, selector) {
			out = append(out, o)
		}
	}
	return out
}

// Matches reports whether labels match selector (see Select).
func Matches(labels map[string]string, selector string) bool {
	for _, req := range splitSelector(selector) {
		req = strings.TrimSpace(req)
		switch {
		case req == "":
		case strings.Contains(req, " in ("):
			k, vs, _ := strings.Cut(req, " in (")
			v, ok := labels[strings.TrimSpace(k)]
			if !ok || !contains(strings.Split(strings.TrimSuffix(vs, ")"), ","), v) {
				return false
			}
		case strings.Contains(req, "!="):
			k, v, _ := strings.Cut(req, "!=")
			if labels[k] == v {
				return false
			}
		case strings.Contains(req, "="):
			k, v, _ := strings.Cut(req, "=")
			if got, ok := labels[strings.TrimSuffix(k, "=")]; !ok || got != strings.TrimPrefix(v, "=") {
				return false
			}
		default:
			if _, ok := labels[req]; !ok {
				return false
			}
		}
	}
	return true
}

func contains(xs []string, v string) bool {
	for _, x := range xs {
		if strings.TrimSpace(x) == v {
			return true
		}
	}
	return false
}

// splitSelector splits at the commas outside parentheses.
func splitSelector(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
