// Package scenario reads the load scenarios in scenarios/*.yaml: what load to
// offer (service, path, profiles of rate × connections × duration, warmup,
// repetitions, headers, keep-alive), parsed strictly so that a typo is an
// error naming file, line and field rather than a silently different test.
package scenario

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

// Defaults for optional fields, also stated in scenarios/README.md and the schema.
const (
	DefaultRepetitions = 5
	DefaultTimeout     = 3 * time.Second
)

// Scenario is one parsed scenarios/<name>.yaml.
type Scenario struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Service     string    `json:"service"`
	Path        string    `json:"path"`
	Warmup      Duration  `json:"warmup"`
	Repetitions int       `json:"repetitions"`
	Timeout     Duration  `json:"timeout"`
	KeepAlive   bool      `json:"keepalive"`
	Headers     []Header  `json:"headers"`
	Profiles    []Profile `json:"profiles"`
	// Source is the file the scenario was read from ("" when parsed from bytes).
	Source string `json:"source,omitempty"`
	// Uniform spreads the connections' requests evenly over each period
	// (fortio's -uniform) instead of fortio's default of every connection
	// sending at the same instant. Omitted from JSON when false, so the
	// run.json of a default scenario is unchanged.
	Uniform bool `json:"uniform,omitempty"`
	// Payload is a request body of this many bytes (fortio's -payload-size):
	// each request is then a POST, and fortio's echo server sends it back.
	Payload int `json:"payload,omitempty"`
	// H2 speaks HTTP/2 (h2c on http:// URLs, fortio's -h2) instead of HTTP/1.1.
	H2 bool `json:"h2,omitempty"`
}

// Echo is the service that is fortio's echo server rather than a Bookinfo
// app: locally bookload starts it in its own process, in a cluster it is
// each namespace's load client (svc/fortio, port 8080).
const Echo = "echo"

// Services are the values of the service field: the Bookinfo apps, then Echo.
var Services = append(slices.Clone(local.Services), Echo)

// MaxPayload is the largest request body: fortio's own payload limit.
const MaxPayload = 256 * 1024

// Header is one extra request header; a list keeps the file's order.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Profile is one rate × connections × duration step of a scenario.
type Profile struct {
	Name        string   `json:"name"`
	QPS         float64  `json:"qps"`
	Connections int      `json:"connections"`
	Duration    Duration `json:"duration"`
}

// Profile returns the profile called name.
func (s *Scenario) Profile(name string) (Profile, bool) {
	for _, p := range s.Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// Duration is a time.Duration that reads and writes as "30s" in JSON, so that
// run.json shows the scenario as it was written.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		// A type error, so that encoding/json names the field that holds it.
		return &json.UnmarshalTypeError{Value: fmt.Sprintf("%q (not a duration such as 30s)", s), Type: reflect.TypeFor[Duration]()}
	}
	*d = Duration(v)
	return nil
}

// Load reads the scenario in file.
func Load(file string) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	s.Source = file
	return s, nil
}

// Resolve finds a scenario given as a path to a YAML file or as a name looked up
// in dir (dir/<name>.yaml), and loads it.
func Resolve(arg, dir string) (*Scenario, error) {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.ContainsRune(arg, filepath.Separator) {
		return Load(arg)
	}
	file := filepath.Join(dir, arg+".yaml")
	if _, err := os.Stat(file); err != nil {
		names, _ := List(dir)
		return nil, fmt.Errorf("no scenario %q in %s (have: %s)", arg, dir, strings.Join(names, ", "))
	}
	return Load(file)
}

// List returns the names of the scenarios in dir.
func List(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return names, nil
}
