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

	"gopkg.in/yaml.v3"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Target is one entry of bench/targets.yaml: a measured metric, how it is
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
	return sym + " " + strconv.FormatFloat(t.Threshold, 'g', -1, 64)
}

// Value is the threshold, %g-formatted, for text that names it.
func (t Target) Value() string { return strconv.FormatFloat(t.Threshold, 'g', -1, 64) }

// Targets are the bench's targets by name.
type Targets map[string]Target

// The names the bench judges; the file must give each once, and no other.
var targetNames = []string{
	"service_p50_floors", "service_p999_ms", "page_p50_ms", "page_p99_ms",
	"max_rate_rps", "max_rate_p99_ms", "hold_fraction", "cpu_per_page_ms",
	"framework_factor", "total_rss_mb", "legacy_details_p99_factor", "soak_rss_slope_mb",
}

// T returns the target called name; the names are checked when the file is
// read, so an unknown one here is a bug in the bench.
func (ts Targets) T(name string) Target {
	t, ok := ts[name]
	if !ok {
		panic("bench: no target " + name)
	}
	return t
}

// LoadTargets reads bench/targets.yaml.
func LoadTargets(file string) (Targets, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return ParseTargets(file, data)
}

// ParseTargets reads a targets document; every problem is reported at once,
// as file:line: field: message (the scenario files' error style).
func ParseTargets(file string, data []byte) (Targets, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, scenario.Errors{{File: file, Msg: "empty file, expected a mapping with targets:"}}
		}
		return nil, scenario.Errors{{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var errs scenario.Errors
	fail := func(n *yaml.Node, field, format string, args ...any) {
		errs = append(errs, &scenario.Error{File: file, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || len(root.Content) != 2 || root.Content[0].Value != "targets" {
		fail(root, "", "want one key, targets:, holding a mapping of target name to {metric, comparison, threshold, why}")
		return nil, errs
	}
	list := root.Content[1]
	if list.Kind != yaml.MappingNode {
		fail(list, "targets", "must be a mapping of target name to {metric, comparison, threshold, why}")
		return nil, errs
	}
	out := Targets{}
	lines := map[string]int{}
	for i := 0; i+1 < len(list.Content); i += 2 {
		k, v := list.Content[i], list.Content[i+1]
		name, path := k.Value, "targets."+k.Value
		if !slices.Contains(targetNames, name) {
			fail(k, path, "unknown target (known: %s)", strings.Join(targetNames, ", "))
			continue
		}
		if line, dup := lines[name]; dup {
			fail(k, path, "defined twice (first at line %d)", line)
			continue
		}
		lines[name] = k.Line
		t := Target{Name: name}
		if v.Kind != yaml.MappingNode {
			fail(v, path, "must be a mapping {metric, comparison, threshold, why}")
			continue
		}
		seen := map[string]bool{}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			fpath := path + "." + fk.Value
			if seen[fk.Value] {
				fail(fk, fpath, "defined twice")
				continue
			}
			seen[fk.Value] = true
			switch fk.Value {
			case "metric", "why":
				if fv.Kind != yaml.ScalarNode || strings.TrimSpace(fv.Value) == "" {
					fail(fv, fpath, "must be a non-empty string")
				} else if fk.Value == "metric" {
					t.Metric = fv.Value
				} else {
					t.Why = fv.Value
				}
			case "comparison":
				if !slices.Contains([]string{"<", "<=", ">", ">="}, fv.Value) {
					fail(fv, fpath, "must be one of <, <=, >, >=, got %q", fv.Value)
				}
				t.Comparison = fv.Value
			case "threshold":
				f, err := strconv.ParseFloat(fv.Value, 64)
				if fv.Kind != yaml.ScalarNode || fv.Tag == "!!str" || err != nil {
					fail(fv, fpath, "must be a number, got %q", fv.Value)
				}
				t.Threshold = f
			default:
				fail(fk, fpath, "unknown field (known fields: metric, comparison, threshold, why)")
			}
		}
		for _, req := range []string{"metric", "comparison", "threshold", "why"} {
			if !seen[req] {
				fail(k, path+"."+req, "missing")
			}
		}
		out[name] = t
	}
	for _, name := range targetNames {
		if _, ok := lines[name]; !ok {
			fail(list, "targets."+name, "missing: the bench judges this target")
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}
