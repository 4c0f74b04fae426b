// Package loadtarget names where load goes: a name (it labels table rows and
// result directories; modes such as no-mesh, sidecar, tuned, legacy are just
// names) and a base URL. The URL's scheme picks the engine: http and https are
// driven in-process by the fortio library, bookload+http and bookload+https
// by a bookload agent (package agentengine, in a cluster), fortio+http and
// fortio+https by a fortio server's REST API (package fortiorest).
package loadtarget

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// DefaultName is the target used when none is given: the local stack.
const DefaultName = "local"

// Target is one place to send load to.
type Target struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Knobs are the settings the target is known to run with, when the caller
	// knows them (e.g. a local stack profile's env vars); recorded, not used.
	Knobs map[string]string `json:"knobs,omitempty"`
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Parse reads a --target flag value NAME=BASEURL.
func Parse(s string) (Target, error) {
	name, base, ok := strings.Cut(s, "=")
	if !ok {
		return Target{}, fmt.Errorf("target %q: want NAME=BASEURL, e.g. tuned=http://127.0.0.1:9080", s)
	}
	t := Target{Name: name, URL: strings.TrimRight(base, "/")}
	return t, t.Validate()
}

// Validate checks the name (used as a directory name) and the URL.
func (t Target) Validate() error {
	if !nameRE.MatchString(t.Name) {
		return fmt.Errorf("target name %q: use letters, digits, '.', '_' and '-'", t.Name)
	}
	u, err := url.Parse(t.URL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("target %s: base URL %q needs a scheme and a host, e.g. http://127.0.0.1:9080", t.Name, t.URL)
	}
	// fortio+http(s) and bookload+http(s) URLs may carry ?url=IN_CLUSTER_BASE
	// (their engines check them); a base URL that gets a path appended may not.
	remote := strings.HasPrefix(u.Scheme, "fortio+") || strings.HasPrefix(u.Scheme, "bookload+")
	if (u.RawQuery != "" && !remote) || u.Fragment != "" {
		return fmt.Errorf("target %s: base URL %q must not have a query or fragment", t.Name, t.URL)
	}
	return nil
}

// Scheme is the URL scheme, which selects the engine.
func (t Target) Scheme() string {
	u, err := url.Parse(t.URL)
	if err != nil {
		return ""
	}
	return u.Scheme
}

// RequestURL is the base URL followed by a scenario's path.
func (t Target) RequestURL(path string) string {
	return strings.TrimRight(t.URL, "/") + path
}

// Local is the default target for a service: the local stack at the default
// port base, on the service's own port.
func Local(service string) (Target, error) {
	port, err := local.Port(local.DefaultPortBase, service)
	if err != nil {
		return Target{}, err
	}
	return Target{Name: DefaultName, URL: fmt.Sprintf("http://127.0.0.1:%d", port)}, nil
}

// InClusterPort is the port of every Bookinfo Service (overlays/base).
const InClusterPort = 9080

// InClusterBase is the base URL a load client inside a namespace uses for a
// scenario's service: the Service of that name on InClusterPort, or, for
// fortio's echo server, the load client's own Service (svc/fortio on 8080:
// stock fortio and the bookload agent both serve fortio's echo there).
func InClusterBase(service string) string {
	if service == scenario.Echo {
		return "http://fortio:8080"
	}
	return fmt.Sprintf("http://%s:%d", service, InClusterPort)
}

// CheckUnique rejects two targets with the same name.
func CheckUnique(ts []Target) error {
	seen := map[string]bool{}
	for _, t := range ts {
		if seen[t.Name] {
			return fmt.Errorf("target name %q given twice", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}
