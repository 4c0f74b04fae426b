package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Plan is what the bench runs and judges, read from one file
// (bench/plan.yaml): the shared base profile, the full page, the stacks'
// warm-up, the parts in the order they run, and the targets. A part's kind
// (parts.go) says how it is measured and judged; the file says what, how
// much and against what.
type Plan struct {
	Source  string
	Base    Base
	Page    Route // the full page: warm-up, ladder, max rate and soak load it
	Warmup  Load  // each stack serves the full page at this first, not recorded
	Parts   []*Part
	Targets Targets
	Timing  Timing // the full bench's durations and repetitions
}

// Base is the shared profile: every endpoint alone and the loopback floor.
type Base struct {
	Load
	Warmup      time.Duration
	Repetitions int
}

// Route is a service and a path on it.
type Route struct{ Service, Path string }

// Load is a rate over a number of connections for a while; which of the
// three a part needs depends on its kind.
type Load struct {
	QPS         float64
	Connections int
	Duration    time.Duration
}

// Profile is the load as a scenario profile (its name: 100rps-10c).
func (l Load) Profile(d time.Duration) scenario.Profile { return profile(l.QPS, l.Connections, d) }

// Part is one entry of parts:. Which fields it carries is its kind's
// (parts.go).
type Part struct {
	Name, Kind           string
	Service, Path, Title string
	Load                 Load
	Busy                 *Load // endpoint: tuned, uniform, at a busy rate
	Rungs                []Load
	Duration             time.Duration
	Targets              []string
	Line                 int
	Spec                 any // the fields of a kind with a parse function
}

// Has says whether the part is judged on target.
func (p *Part) Has(target string) bool { return slices.Contains(p.Targets, target) }

// Part returns the part called name, or nil.
func (p *Plan) Part(name string) *Part {
	for _, pt := range p.Parts {
		if pt.Name == name {
			return pt
		}
	}
	return nil
}

// OfKind lists the parts of kind k in plan order.
func (p *Plan) OfKind(k string) []*Part {
	var out []*Part
	for _, pt := range p.Parts {
		if pt.Kind == k {
			out = append(out, pt)
		}
	}
	return out
}

// first returns the first part of kind k, or an empty part of that kind (a
// plan without it measures nothing of it).
func (p *Plan) first(k string) *Part {
	if ps := p.OfKind(k); len(ps) > 0 {
		return ps[0]
	}
	return &Part{Kind: k}
}

// PageEndpoint is the endpoint part that loads the full page, or nil.
func (p *Plan) PageEndpoint() *Part {
	for _, e := range p.OfKind("endpoint") {
		if e.Service == p.Page.Service && e.Path == p.Page.Path {
			return e
		}
	}
	return nil
}

// Select returns the names of the parts to run for only (every part when
// only is ""), with the parts they need, in plan order.
func (p *Plan) Select(only string) ([]string, error) {
	want := map[string]bool{}
	var add func(name string)
	add = func(name string) {
		if want[name] {
			return
		}
		want[name] = true
		pt := p.Part(name)
		for _, n := range kinds[pt.Kind].needs(p, pt) {
			add(n)
		}
	}
	for _, name := range strings.Split(only, ",") {
		if only == "" {
			break
		}
		if p.Part(name) == nil {
			var names []string
			for _, pt := range p.Parts {
				names = append(names, pt.Name)
			}
			return nil, fmt.Errorf("--only %s: no such part in %s (parts: %s)", name, p.Source, strings.Join(names, ", "))
		}
		add(name)
	}
	var out []string
	for _, pt := range p.Parts {
		if only == "" || want[pt.Name] {
			out = append(out, pt.Name)
		}
	}
	return out, nil
}

// SoakSample and Probes are method, not workload: how often the soak reads
// RSS and how many probes the max-rate search may take.
const (
	soakSample = 30 * time.Second
	maxProbes  = 4
)

// LoadPlan reads a plan file.
func LoadPlan(file string) (*Plan, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return ParsePlan(file, data)
}

// ParsePlan reads a plan document; every problem is reported at once, each
// as file:line: field: message. file is used in the messages only.
func ParsePlan(file string, data []byte) (*Plan, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, scenario.Errors{{File: file, Msg: "empty file, expected a mapping with base, page, warmup, parts and targets"}}
		}
		return nil, scenario.Errors{{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	r := &reader{file: file}
	p := &Plan{Source: file}
	top := r.mapping(doc.Content[0], "", []string{"base", "page", "warmup", "parts", "targets"}, []string{"base", "page", "warmup", "parts", "targets"})
	if n := top["base"]; n != nil {
		f := r.mapping(n, "base", []string{"qps", "connections", "duration", "warmup", "repetitions"}, []string{"qps", "connections", "duration", "repetitions"})
		p.Base = Base{Load: r.load(f, "base"), Repetitions: r.integer(f["repetitions"], "base.repetitions", 1)}
		if f["warmup"] != nil {
			p.Base.Warmup = r.duration(f["warmup"], "base.warmup", true)
		}
	}
	if n := top["page"]; n != nil {
		f := r.mapping(n, "page", []string{"service", "path"}, []string{"service", "path"})
		p.Page = Route{Service: r.str(f["service"], "page.service"), Path: r.str(f["path"], "page.path")}
	}
	if n := top["warmup"]; n != nil {
		f := r.mapping(n, "warmup", []string{"qps", "connections", "duration"}, []string{"qps", "connections", "duration"})
		p.Warmup = r.load(f, "warmup")
	}
	if n := top["parts"]; n != nil {
		p.Parts = r.parts(n)
	}
	if n := top["targets"]; n != nil {
		p.Targets = r.targets(n, usedTargets(p.Parts))
	}
	if len(r.errs) > 0 {
		return nil, r.errs
	}
	p.Timing = Timing{
		Rep: p.Base.Duration, Warmup: p.Base.Warmup, Reps: p.Base.Repetitions,
		LadderStep: p.first("ladder").Duration, Probe: p.first("maxrate").Load.Duration,
		StackWarmup: p.Warmup.Duration, SoakSample: soakSample, Probes: maxProbes,
	}
	return p, nil
}

// usedTargets is every target some part of the plan is judged on.
func usedTargets(parts []*Part) map[string]bool {
	used := map[string]bool{}
	for _, pt := range parts {
		k := kinds[pt.Kind]
		if k == nil {
			continue
		}
		for _, t := range k.targets {
			if pt.Kind != "endpoint" || pt.Has(t) {
				used[t] = true
			}
		}
	}
	return used
}

func (r *reader) parts(n *yaml.Node) []*Part {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		r.fail(n, "parts", "must be a non-empty list of parts, each {name, kind, ...}")
		return nil
	}
	var out []*Part
	lines := map[string]int{}
	for i, e := range n.Content {
		path := fmt.Sprintf("parts[%d]", i)
		if e.Kind != yaml.MappingNode {
			r.fail(e, path, "must be a mapping {name, kind, ...}")
			continue
		}
		head := r.mapping(e, path, nil, nil) // name and kind first: the kind says which fields are known
		pt := &Part{Line: e.Line}
		pt.Name = r.str(head["name"], path+".name")
		pt.Kind = r.str(head["kind"], path+".kind")
		if head["name"] == nil || head["kind"] == nil {
			r.fail(e, path, "needs name and kind")
			continue
		}
		if line, dup := lines[pt.Name]; dup {
			r.fail(head["name"], path+".name", "part %q defined twice (first at line %d)", pt.Name, line)
		}
		lines[pt.Name] = e.Line
		k := kinds[pt.Kind]
		if k == nil {
			r.fail(head["kind"], path+".kind", "unknown kind %q (known: %s)", pt.Kind, strings.Join(kindNames(), ", "))
			continue
		}
		f := r.mapping(e, path, append([]string{"name", "kind"}, k.fields...), k.required)
		pt.Service, pt.Path, pt.Title = r.str(f["service"], path+".service"), r.str(f["path"], path+".path"), r.str(f["title"], path+".title")
		if pt.Title == "" {
			pt.Title = pt.Name
		}
		if f["load"] != nil {
			lf := r.mapping(f["load"], path+".load", []string{"qps", "connections", "duration"}, k.load)
			pt.Load = r.load(lf, path+".load")
		}
		if f["busy"] != nil {
			bf := r.mapping(f["busy"], path+".busy", []string{"qps", "connections"}, []string{"qps", "connections"})
			b := r.load(bf, path+".busy")
			pt.Busy = &b
		}
		if f["duration"] != nil {
			pt.Duration = r.duration(f["duration"], path+".duration", false)
		}
		if n := f["rungs"]; n != nil {
			if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
				r.fail(n, path+".rungs", "must be a non-empty list of {qps, connections}")
			} else {
				for j, rn := range n.Content {
					rp := fmt.Sprintf("%s.rungs[%d]", path, j)
					pt.Rungs = append(pt.Rungs, r.load(r.mapping(rn, rp, []string{"qps", "connections"}, []string{"qps", "connections"}), rp))
				}
			}
		}
		if k.parse != nil {
			k.parse(r, f, path, pt)
		}
		if n := f["targets"]; n != nil {
			if n.Kind != yaml.SequenceNode {
				r.fail(n, path+".targets", "must be a list of target names")
			}
			for j, tn := range n.Content {
				t := r.str(tn, fmt.Sprintf("%s.targets[%d]", path, j))
				if !slices.Contains(k.targets, t) {
					r.fail(tn, fmt.Sprintf("%s.targets[%d]", path, j), "a part of kind %s is not judged on %q (it can be on: %s)", pt.Kind, t, strings.Join(k.targets, ", "))
				}
				pt.Targets = append(pt.Targets, t)
			}
		}
		out = append(out, pt)
	}
	return out
}

// reader walks the plan's yaml.Node tree, collecting every error with its line.
type reader struct {
	file string
	errs scenario.Errors
}

func (r *reader) fail(n *yaml.Node, field, format string, args ...any) {
	r.errs = append(r.errs, &scenario.Error{File: r.file, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// mapping returns n's values by key. With known non-nil, other keys are
// errors, and every one of required must be there.
func (r *reader) mapping(n *yaml.Node, path string, known, required []string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		r.fail(n, path, "must be a mapping")
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := join(path, k.Value)
		if known != nil && !slices.Contains(known, k.Value) {
			r.fail(k, field, "unknown field (known fields: %s)", strings.Join(known, ", "))
			continue
		}
		if _, dup := out[k.Value]; dup && known != nil {
			r.fail(k, field, "defined twice")
			continue
		}
		out[k.Value] = v
	}
	for _, req := range required {
		if out[req] == nil {
			r.fail(n, join(path, req), "missing")
		}
	}
	return out
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func (r *reader) str(n *yaml.Node, path string) string {
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode || strings.TrimSpace(n.Value) == "" {
		r.fail(n, path, "must be a non-empty string")
		return ""
	}
	return n.Value
}

func (r *reader) number(n *yaml.Node, path string) float64 {
	f, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!str" || err != nil {
		r.fail(n, path, "must be a number, got %q", n.Value)
		return 0
	}
	return f
}

func (r *reader) integer(n *yaml.Node, path string, least int) int {
	if n == nil {
		return 0
	}
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v < least {
		r.fail(n, path, "must be an integer ≥ %d, got %q", least, n.Value)
	}
	return v
}

func (r *reader) duration(n *yaml.Node, path string, zeroOK bool) time.Duration {
	d, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || d < 0 || (d == 0 && !zeroOK) {
		r.fail(n, path, "must be a duration with a unit, like 5s or 30m, greater than 0, got %q", n.Value)
	}
	return d
}

// load reads qps, connections and duration from f where present.
func (r *reader) load(f map[string]*yaml.Node, path string) Load {
	var l Load
	if n := f["qps"]; n != nil {
		if l.QPS = r.number(n, path+".qps"); l.QPS <= 0 && n.Tag != "!!str" {
			r.fail(n, path+".qps", "must be > 0, got %q", n.Value)
		}
	}
	l.Connections = r.integer(f["connections"], path+".connections", 1)
	if n := f["duration"]; n != nil {
		l.Duration = r.duration(n, path+".duration", false)
	}
	return l
}

// Target is one entry of the plan's targets: a measured metric, how it is
// compared with the threshold, and why the threshold is what it is.
type Target struct {
	Name       string
	Metric     string
	Comparison string // <, <=, > or >=
	Threshold  float64
	Why        string
}

// Met compares v with the threshold; NaN (not measured) is never met.
func (t Target) Met(v float64) bool {
	switch t.Comparison {
	case "<":
		return v < t.Threshold
	case "<=":
		return v <= t.Threshold
	case ">":
		return v > t.Threshold
	case ">=":
		return v >= t.Threshold
	}
	return false
}

// Text is the comparison as BENCHMARKS.md prints it: "≤ 2.5".
func (t Target) Text() string {
	sym := map[string]string{"<": "<", "<=": "≤", ">": ">", ">=": "≥"}[t.Comparison]
	return sym + " " + t.Value()
}

// Value is the threshold, %g-formatted, for text that names it.
func (t Target) Value() string { return strconv.FormatFloat(t.Threshold, 'g', -1, 64) }

// Targets are the plan's targets by name, in file order in Order.
type Targets struct {
	ByName map[string]Target
	Order  []string
}

// T returns the target called name; the plan is checked to define every
// target its parts use, so a missing one here is a bug in the bench.
func (ts Targets) T(name string) Target {
	t, ok := ts.ByName[name]
	if !ok {
		panic("bench: no target " + name)
	}
	return t
}

// targets reads the targets mapping: each used target once, and no other.
func (r *reader) targets(list *yaml.Node, used map[string]bool) Targets {
	out := Targets{ByName: map[string]Target{}}
	if list.Kind != yaml.MappingNode {
		r.fail(list, "targets", "must be a mapping of target name to {metric, comparison, threshold, why}")
		return out
	}
	known := knownTargets()
	lines := map[string]int{}
	for i := 0; i+1 < len(list.Content); i += 2 {
		k, v := list.Content[i], list.Content[i+1]
		name, path := k.Value, "targets."+k.Value
		if !slices.Contains(known, name) {
			r.fail(k, path, "unknown target (known: %s)", strings.Join(known, ", "))
			continue
		}
		if line, dup := lines[name]; dup {
			r.fail(k, path, "defined twice (first at line %d)", line)
			continue
		}
		lines[name] = k.Line
		f := r.mapping(v, path, []string{"metric", "comparison", "threshold", "why"}, []string{"metric", "comparison", "threshold", "why"})
		t := Target{Name: name, Metric: r.str(f["metric"], path+".metric"), Why: r.str(f["why"], path+".why")}
		if n := f["comparison"]; n != nil {
			if t.Comparison = n.Value; !slices.Contains([]string{"<", "<=", ">", ">="}, n.Value) {
				r.fail(n, path+".comparison", "must be one of <, <=, >, >=, got %q", n.Value)
			}
		}
		if n := f["threshold"]; n != nil {
			t.Threshold = r.number(n, path+".threshold")
		}
		out.ByName[name] = t
		out.Order = append(out.Order, name)
	}
	for _, name := range known {
		if _, ok := lines[name]; !ok && used[name] {
			r.fail(list, "targets."+name, "missing: a part of the plan is judged on this target")
		}
	}
	return out
}
