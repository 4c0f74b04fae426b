// Package registry is the one list of bookload's engines: each one's name,
// the URL schemes it serves, how to make it for a target, and a line of
// help. Both ways of choosing an engine read it, `bookload run --engine
// NAME` (Named) and the automatic choice by URL scheme (ByScheme), and so do
// the flag's help and the errors that list what is known. Adding an engine
// is adding an entry.
package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/agentengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortioengine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fortiorest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/k6engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// Pick returns the engine of a target (runner.Config.EngineFor).
type Pick = func(loadtarget.Target) (engine.Engine, error)

// Entry is one engine.
type Entry struct {
	// Name is the engine's name in run.json.
	Name string
	// Schemes are the target URL schemes it serves.
	Schemes []string
	// New makes the engine for a target of one of Schemes.
	New Pick
	// Help says where the load comes from, to follow "runs on".
	Help string
}

// Auto is the --engine value that picks by URL scheme.
const Auto = "auto"

var plainHTTP = []string{"http", "https"}

// Engines in order of preference: for a URL scheme, ByScheme picks the first
// that serves it. `--engine NAME` names one that serves http and https (a
// load generator of its own); the others are reached by their schemes.
var Engines = []Entry{
	{
		Name: fortioengine.Name, Schemes: plainHTTP, Help: "the in-process fortio library",
		New: func(loadtarget.Target) (engine.Engine, error) { return &fortioengine.Engine{}, nil },
	},
	{
		Name: k6engine.Name, Schemes: plainHTTP, Help: "the k6 binary, see load/README.md",
		New: func(loadtarget.Target) (engine.Engine, error) { return &k6engine.Engine{}, nil },
	},
	{
		Name: agentengine.Name, Schemes: []string{"bookload+http", "bookload+https"}, Help: "a bookload agent",
		New: func(t loadtarget.Target) (engine.Engine, error) { return agentengine.New(t) },
	},
	{
		Name: fortiorest.Name, Schemes: []string{"fortio+http", "fortio+https"}, Help: "a fortio server's REST API",
		New: func(t loadtarget.Target) (engine.Engine, error) { return fortiorest.New(t) },
	},
}

// selectable reports whether --engine may name e.
func (e Entry) selectable() bool { return slices.Contains(e.Schemes, "http") }

// Names are the values of --engine: Auto, then the selectable engines.
func Names() []string {
	names := []string{Auto}
	for _, e := range Engines {
		if e.selectable() {
			names = append(names, e.Name)
		}
	}
	return names
}

// ByScheme picks the engine of t by its URL scheme.
func ByScheme(t loadtarget.Target) (engine.Engine, error) {
	for _, e := range Engines {
		if slices.Contains(e.Schemes, t.Scheme()) {
			return e.New(t)
		}
	}
	return nil, fmt.Errorf("target %s: no engine for %q URLs (%s)", t.Name, t.Scheme(), schemeList())
}

// Named returns the Pick of `--engine NAME`: Auto (or "") is ByScheme; an
// engine's name drives every target with that engine, and a target of a
// scheme it does not serve is an error.
func Named(name string) (Pick, error) {
	if name == "" || name == Auto {
		return ByScheme, nil
	}
	for _, e := range Engines {
		if e.Name != name || !e.selectable() {
			continue
		}
		return func(t loadtarget.Target) (engine.Engine, error) {
			if !slices.Contains(e.Schemes, t.Scheme()) {
				return nil, fmt.Errorf("target %s: the %s engine drives %s URLs, not %q", t.Name, e.Name, strings.Join(e.Schemes, " and "), t.Scheme())
			}
			return e.New(t)
		}, nil
	}
	return nil, fmt.Errorf("unknown engine %q; known: %s", name, strings.Join(Names(), ", "))
}

// schemeList says which engine ByScheme picks for each scheme:
// "http and https run on the in-process fortio library, ...".
func schemeList() string {
	var parts []string
	seen := map[string]bool{}
	for _, e := range Engines {
		var mine []string
		for _, s := range e.Schemes {
			if !seen[s] {
				seen[s] = true
				mine = append(mine, s)
			}
		}
		if len(mine) > 0 {
			parts = append(parts, strings.Join(mine, " and ")+" run on "+e.Help)
		}
	}
	return strings.Join(parts, ", ")
}

// FlagHelp is the help of --engine.
func FlagHelp() string {
	var named []string
	for _, e := range Engines {
		if e.selectable() {
			named = append(named, e.Name+" ("+e.Help+")")
		}
	}
	return fmt.Sprintf("load generator: %s picks by URL scheme (%s); %s drives every target, which must then be http(s)",
		Auto, schemeList(), strings.Join(named, " or "))
}
