package local

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Profiles name sets of HTTP knobs. "tuned" is every knob at its default;
// "legacy" reproduces the classic sample: details without TCP_NODELAY (Nagle
// plus delayed ACK stalls its two-write responses), productpage without
// keep-alive inbound or outbound.
var Profiles = map[string]map[string]map[string]string{
	"tuned": {},
	"legacy": {
		"details":     {"HTTP_NODELAY": "false"},
		"productpage": {"HTTP_KEEPALIVE": "false", "UPSTREAM_KEEPALIVE": "false"},
	},
}

// ReviewsVersions maps a reviews version to the env that selects it.
var ReviewsVersions = map[string]map[string]string{
	"v1": {"ENABLE_RATINGS": "false"},
	"v2": {"ENABLE_RATINGS": "true", "STAR_COLOR": "black"},
	"v3": {"ENABLE_RATINGS": "true", "STAR_COLOR": "red"},
}

// Config describes one stack.
type Config struct {
	PortBase int
	Profile  string
	Reviews  string
	// Set holds extra per-service variables (service -> name -> value),
	// applied after the profile's.
	Set map[string]map[string]string
	// Without lists services not to start; their ports stay free so a
	// stand-in can take them.
	Without []string
}

// Validate checks the config and fills defaults.
func (c *Config) Validate() error {
	if c.PortBase == 0 {
		c.PortBase = DefaultPortBase
	}
	if c.PortBase < 1024 || c.PortBase+len(Services)-1 > 65535 {
		return fmt.Errorf("port base %d out of range: want 1024..%d", c.PortBase, 65535-len(Services)+1)
	}
	if c.Profile == "" {
		c.Profile = "tuned"
	}
	if _, ok := Profiles[c.Profile]; !ok {
		return fmt.Errorf("unknown profile %q: want one of %s", c.Profile, strings.Join(keys(Profiles), ", "))
	}
	if c.Reviews == "" {
		c.Reviews = "v2"
	}
	if _, ok := ReviewsVersions[c.Reviews]; !ok {
		return fmt.Errorf("unknown reviews version %q: want one of %s", c.Reviews, strings.Join(keys(ReviewsVersions), ", "))
	}
	for svc := range c.Set {
		if _, err := Port(0, svc); err != nil {
			return err
		}
	}
	for _, svc := range c.Without {
		if _, err := Port(0, svc); err != nil {
			return err
		}
	}
	return nil
}

// ParseSet parses "service.NAME=value" into cfg.Set.
func (c *Config) ParseSet(s string) error {
	dot := strings.IndexByte(s, '.')
	eq := strings.IndexByte(s, '=')
	if dot <= 0 || eq < dot+2 {
		return fmt.Errorf("bad --set %q: want service.NAME=value, e.g. details.HTTP_NODELAY=false", s)
	}
	svc, name, val := s[:dot], s[dot+1:eq], s[eq+1:]
	if _, err := Port(0, svc); err != nil {
		return fmt.Errorf("bad --set %q: %w", s, err)
	}
	if c.Set == nil {
		c.Set = map[string]map[string]string{}
	}
	if c.Set[svc] == nil {
		c.Set[svc] = map[string]string{}
	}
	c.Set[svc][name] = val
	return nil
}

// Env returns the variables of service in this stack: its port, loopback
// wiring to its peers, the profile's knobs, the reviews version and --set
// values, in that order of precedence (later wins).
func (c *Config) Env(service string) map[string]string {
	port := func(s string) string { p, _ := Port(c.PortBase, s); return strconv.Itoa(p) }
	env := map[string]string{
		"PORT":           port(service),
		"LISTEN_ADDRESS": "127.0.0.1",
	}
	switch service {
	case "productpage":
		env["DETAILS_HOSTNAME"], env["DETAILS_SERVICE_PORT"] = "127.0.0.1", port("details")
		env["REVIEWS_HOSTNAME"], env["REVIEWS_SERVICE_PORT"] = "127.0.0.1", port("reviews")
		env["RATINGS_HOSTNAME"], env["RATINGS_SERVICE_PORT"] = "127.0.0.1", port("ratings")
	case "reviews":
		env["RATINGS_HOSTNAME"], env["RATINGS_SERVICE_PORT"] = "127.0.0.1", port("ratings")
		env["SERVICE_VERSION"] = c.Reviews
		// The page shows "Reviews served by: <HOSTNAME>", as a pod name would.
		env["HOSTNAME"] = fmt.Sprintf("reviews-%s-local-%d", c.Reviews, c.PortBase)
		for k, v := range ReviewsVersions[c.Reviews] {
			env[k] = v
		}
	case "ratings":
		env["SERVICE_VERSION"] = "v1"
	}
	for k, v := range Profiles[c.Profile][service] {
		env[k] = v
	}
	for k, v := range c.Set[service] {
		env[k] = v
	}
	return env
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
