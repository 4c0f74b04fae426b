package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a scenario file, printed as
// "scenarios/foo.yaml:7: profiles[0].qps: must be > 0, got -5".
type Error struct {
	File  string
	Line  int
	Field string // dotted path such as profiles[0].qps; "" for the whole file
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one file, in file order.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

var (
	nameRE   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	tokenRE  = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	yamlLine = regexp.MustCompile(`line (\d+):`)
)

// Parse reads one scenario document. file is used in error messages only.
//
// The document is walked as a yaml.Node tree rather than decoded into a struct
// (yaml.v3's KnownFields): the walk knows each value's line and field path, so
// every error can say where it is, and all errors are reported at once.
func Parse(file string, data []byte) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Msg: "empty file, expected a scenario mapping"}}
		}
		return nil, Errors{yamlError(file, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return nil, Errors{{File: file, Line: line, Msg: "more than one YAML document; one scenario per file"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, Errors{yamlError(file, err)}
	}
	p := &parser{file: file}
	s := p.scenario(doc.Content[0])
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return s, nil
}

func yamlError(file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		// yaml.v3 prints the 0-based line of the enclosing context for parser
		// errors ("did not find expected ..."), the 1-based one for scanner errors.
		if strings.Contains(msg, "did not find expected") {
			line++
		}
		msg = strings.TrimSpace(strings.Replace(msg, m[0], "", 1))
	}
	return &Error{File: file, Line: line, Msg: "invalid YAML: " + msg}
}

type parser struct {
	file string
	errs Errors
}

func (p *parser) errorf(n *yaml.Node, field, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// field is one key: value pair of a mapping.
type field struct {
	key, value *yaml.Node
}

// fields checks that n is a mapping whose keys are all in known, with no
// duplicates, and returns them by name.
func (p *parser) fields(n *yaml.Node, path string, known []string) map[string]field {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "must be a mapping, got %s", kindName(n))
		return nil
	}
	out := map[string]field{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if !slices.Contains(known, name) {
			p.errorf(k, join(path, name), "unknown field (known fields: %s)", strings.Join(known, ", "))
			continue
		}
		if prev, dup := out[name]; dup {
			p.errorf(k, join(path, name), "defined twice (first at line %d)", prev.key.Line)
			continue
		}
		out[name] = field{k, v}
	}
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "unknown node"
}

var scenarioFields = []string{"name", "description", "service", "path", "warmup", "repetitions", "timeout", "keepalive", "uniform", "payload", "h2", "headers", "profiles"}

var profileFields = []string{"name", "qps", "connections", "duration"}

func (p *parser) scenario(root *yaml.Node) *Scenario {
	s := &Scenario{Repetitions: DefaultRepetitions, Timeout: Duration(DefaultTimeout), KeepAlive: true}
	fs := p.fields(root, "", scenarioFields)
	if fs == nil {
		return s
	}
	for _, req := range []string{"name", "service", "path", "profiles"} {
		if _, ok := fs[req]; !ok {
			p.errorf(root, req, "required field missing")
		}
	}
	if f, ok := fs["name"]; ok {
		s.Name = p.str(f.value, "name")
		if s.Name != "" && !nameRE.MatchString(s.Name) {
			p.errorf(f.value, "name", "must be lowercase letters, digits and dashes (it names the result directory), got %q", s.Name)
		}
	}
	if f, ok := fs["description"]; ok {
		s.Description = p.str(f.value, "description")
	}
	if f, ok := fs["service"]; ok {
		s.Service = p.str(f.value, "service")
		if s.Service != "" && !slices.Contains(Services, s.Service) {
			p.errorf(f.value, "service", "must be one of %s, got %q", strings.Join(Services, ", "), s.Service)
		}
	}
	if f, ok := fs["path"]; ok {
		s.Path = p.str(f.value, "path")
		if s.Path != "" && !strings.HasPrefix(s.Path, "/") {
			p.errorf(f.value, "path", "must start with /, got %q", s.Path)
		}
	}
	if f, ok := fs["warmup"]; ok {
		s.Warmup = p.duration(f.value, "warmup", true)
	}
	if f, ok := fs["repetitions"]; ok {
		s.Repetitions = p.integer(f.value, "repetitions", 1)
	}
	if f, ok := fs["timeout"]; ok {
		s.Timeout = p.duration(f.value, "timeout", false)
	}
	if f, ok := fs["keepalive"]; ok {
		s.KeepAlive = p.boolean(f.value, "keepalive")
	}
	if f, ok := fs["uniform"]; ok {
		s.Uniform = p.boolean(f.value, "uniform")
	}
	if f, ok := fs["payload"]; ok {
		s.Payload = p.integer(f.value, "payload", 0)
		if s.Payload > MaxPayload {
			p.errorf(f.value, "payload", "must be at most %d bytes (fortio's payload limit), got %d", MaxPayload, s.Payload)
		}
	}
	if f, ok := fs["h2"]; ok {
		s.H2 = p.boolean(f.value, "h2")
	}
	if f, ok := fs["headers"]; ok {
		s.Headers = p.headers(f.value, s.KeepAlive)
	}
	if f, ok := fs["profiles"]; ok {
		s.Profiles = p.profiles(f.value)
	}
	return s
}

func (p *parser) headers(n *yaml.Node, keepAlive bool) []Header {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "headers", "must be a mapping of header name to value, got %s", kindName(n))
		return nil
	}
	var hs []Header
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := "headers." + k.Value
		if !tokenRE.MatchString(k.Value) {
			p.errorf(k, path, "not a valid header name")
			continue
		}
		canon := strings.ToLower(k.Value)
		if line, dup := seen[canon]; dup {
			p.errorf(k, path, "defined twice (first at line %d)", line)
			continue
		}
		seen[canon] = k.Line
		if canon == "connection" && !keepAlive {
			p.errorf(k, path, "keepalive: false already sends Connection: close; drop one of the two")
			continue
		}
		hs = append(hs, Header{Name: k.Value, Value: p.str(v, path)})
	}
	return hs
}

func (p *parser) profiles(n *yaml.Node) []Profile {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "profiles", "must be a list of profiles, got %s", kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.errorf(n, "profiles", "must list at least one profile")
		return nil
	}
	seen := map[string]int{}
	out := make([]Profile, 0, len(n.Content))
	for i, pn := range n.Content {
		path := fmt.Sprintf("profiles[%d]", i)
		fs := p.fields(pn, path, profileFields)
		if fs == nil {
			continue
		}
		var pr Profile
		complete := true
		for _, req := range profileFields {
			if _, ok := fs[req]; !ok {
				p.errorf(pn, path+"."+req, "required field missing")
				complete = false
			}
		}
		if f, ok := fs["name"]; ok {
			pr.Name = p.str(f.value, path+".name")
			if pr.Name != "" && !nameRE.MatchString(pr.Name) {
				p.errorf(f.value, path+".name", "must be lowercase letters, digits and dashes (it names a result directory), got %q", pr.Name)
			}
			if line, dup := seen[pr.Name]; dup {
				p.errorf(f.value, path+".name", "profile %q defined twice (first at line %d)", pr.Name, line)
			}
			seen[pr.Name] = f.value.Line
		}
		if f, ok := fs["qps"]; ok {
			pr.QPS = p.positiveNumber(f.value, path+".qps")
		}
		if f, ok := fs["connections"]; ok {
			pr.Connections = p.integer(f.value, path+".connections", 1)
		}
		if f, ok := fs["duration"]; ok {
			pr.Duration = p.duration(f.value, path+".duration", false)
		}
		// fortio silently lowers the connection count when each would get fewer
		// than two requests; the table would then show a different profile.
		if complete && pr.QPS > 0 && pr.Connections > 0 && pr.Duration > 0 {
			calls := int64(pr.QPS * pr.Duration.Std().Seconds())
			if calls < 2*int64(pr.Connections) {
				p.errorf(pn, path, "qps × duration gives %d requests, fewer than 2 per connection (%d connections); raise duration or qps", calls, pr.Connections)
			}
		}
		out = append(out, pr)
	}
	return out
}

func (p *parser) scalar(n *yaml.Node, path, want string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, path, "must be %s, got %s", want, kindName(n))
		return false
	}
	return true
}

func (p *parser) str(n *yaml.Node, path string) string {
	if !p.scalar(n, path, "a string") {
		return ""
	}
	return n.Value
}

func (p *parser) boolean(n *yaml.Node, path string) bool {
	if !p.scalar(n, path, "true or false") {
		return false
	}
	if n.Tag != "!!bool" {
		p.errorf(n, path, "must be true or false, got %q", n.Value)
		return false
	}
	b, _ := strconv.ParseBool(strings.ToLower(n.Value))
	return b
}

func (p *parser) integer(n *yaml.Node, path string, min int) int {
	if !p.scalar(n, path, "an integer") {
		return 0
	}
	v, err := strconv.Atoi(n.Value)
	if n.Tag != "!!int" || err != nil {
		p.errorf(n, path, "must be an integer, got %q", n.Value)
		return 0
	}
	if v < min {
		p.errorf(n, path, "must be >= %d, got %d", min, v)
	}
	return v
}

func (p *parser) positiveNumber(n *yaml.Node, path string) float64 {
	if !p.scalar(n, path, "a number") {
		return 0
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if (n.Tag != "!!int" && n.Tag != "!!float") || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		p.errorf(n, path, "must be a number, got %q", n.Value)
		return 0
	}
	if v <= 0 {
		p.errorf(n, path, "must be > 0, got %s", n.Value)
	}
	return v
}

func (p *parser) duration(n *yaml.Node, path string, zeroOK bool) Duration {
	if !p.scalar(n, path, "a duration such as 30s") {
		return 0
	}
	if n.Tag == "!!int" || n.Tag == "!!float" {
		if v, _ := strconv.ParseFloat(n.Value, 64); v == 0 && zeroOK {
			return 0
		}
		p.errorf(n, path, "must be a duration with a unit such as %ss, got %s", n.Value, n.Value)
		return 0
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		p.errorf(n, path, "must be a duration such as 500ms, 30s or 2m, got %q", n.Value)
		return 0
	}
	switch {
	case d < 0:
		p.errorf(n, path, "must not be negative, got %s", n.Value)
	case d == 0 && !zeroOK:
		p.errorf(n, path, "must be > 0, got %s", n.Value)
	}
	return Duration(d)
}
