package bench

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Plan is what the bench runs and judges, read from files: the scenarios
// scenarios/bench-*.yaml (each an ordinary scenario, also runnable with
// `bookload run`) and the targets in bench/targets.yaml. The Go code decides
// how to measure (floor, interleaving, the max-rate search, the soak's
// sampling); the files say what, how much and against what.
type Plan struct {
	// Alone are the endpoints measured one at a time: every bench-*.yaml
	// without a role of its own (below), the leaf services first
	// (details, ratings, reviews, then productpage's routes by name).
	Alone       []Endpoint
	StackWarmup scenario.Profile   // bench-warmup.yaml: the full page on each stack first, not recorded
	Framework   scenario.Profile   // bench-framework.yaml: its path (/health) on every service
	HealthPath  string             // that path
	Ladder      []scenario.Profile // bench-ladder.yaml: the full page's rungs, in order
	MaxRate     scenario.Profile   // bench-maxrate.yaml: the search's first probe
	Soak        scenario.Profile   // bench-soak.yaml: rate and default duration
	Timing      Timing             // the full bench's durations and repetitions, from the files
	Targets     Targets
	Sources     []string // the files read
}

// Endpoint is one bench-<key>.yaml measured alone.
type Endpoint struct {
	Key, Service, Path, Title string
	Base                      scenario.Profile  // tuned vs legacy in bursts, tuned with uniform arrival
	Busy                      *scenario.Profile // tuned, uniform, at a busy rate; nil when the file has one profile
}

// Endpoint returns the endpoint called key (details, page, ...), or nil.
func (p *Plan) Endpoint(key string) *Endpoint {
	for i := range p.Alone {
		if p.Alone[i].Key == key {
			return &p.Alone[i]
		}
	}
	return nil
}

// The bench-*.yaml files with a role of their own; bench-details and
// bench-page must exist because targets are judged on them.
var (
	roleFiles     = []string{"bench-warmup", "bench-framework", "bench-ladder", "bench-maxrate", "bench-soak"}
	requiredAlone = []string{"details", "page"}
	serviceOrder  = []string{"details", "ratings", "reviews", "productpage"}
)

// SoakSample and Probes are method, not workload: how often the soak reads
// RSS and how many probes the max-rate search may take.
const (
	soakSample = 30 * time.Second
	maxProbes  = 4
)

// LoadPlan reads the bench's scenarios from dir and its targets from targets.
// Every problem in every file is reported, each as file:line: field: message.
func LoadPlan(dir, targets string) (*Plan, error) {
	files, err := filepath.Glob(filepath.Join(dir, "bench-*.yaml"))
	if err != nil {
		return nil, err
	}
	var errs scenario.Errors
	add := func(file string, err error) {
		var es scenario.Errors
		var e *scenario.Error
		switch {
		case errors.As(err, &es):
			errs = append(errs, es...)
		case errors.As(err, &e):
			errs = append(errs, e)
		default:
			errs = append(errs, &scenario.Error{File: file, Msg: err.Error()})
		}
	}
	addE := func(e *scenario.Error) { errs = append(errs, e) }
	p := &Plan{}
	byName := map[string]*scenario.Scenario{}
	for _, f := range files {
		s, err := scenario.Load(f)
		if err != nil {
			add(f, err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); s.Name != want {
			addE(&scenario.Error{File: f, Field: "name", Msg: fmt.Sprintf("must be the file name %q, got %q", want, s.Name)})
			continue
		}
		byName[s.Name] = s
		p.Sources = append(p.Sources, f)
	}
	if p.Targets, err = LoadTargets(targets); err != nil {
		add(targets, err)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	need := func(name string) *scenario.Scenario {
		s := byName[name]
		if s == nil {
			addE(&scenario.Error{File: filepath.Join(dir, name+".yaml"), Msg: "missing: make bench needs this scenario"})
		}
		return s
	}
	one := func(s *scenario.Scenario) scenario.Profile {
		if s == nil {
			return scenario.Profile{}
		}
		if len(s.Profiles) != 1 {
			addE(&scenario.Error{File: s.Source, Field: "profiles", Msg: fmt.Sprintf("want exactly one profile, got %d", len(s.Profiles))})
		}
		return s.Profiles[0]
	}
	warm, fw, ladder, maxRate, soak := need("bench-warmup"), need("bench-framework"), need("bench-ladder"), need("bench-maxrate"), need("bench-soak")
	p.StackWarmup, p.Framework, p.MaxRate, p.Soak = one(warm), one(fw), one(maxRate), one(soak)
	if fw != nil {
		p.HealthPath = fw.Path
	}
	if ladder != nil {
		p.Ladder = ladder.Profiles
		for i, pr := range ladder.Profiles {
			if pr.Duration != ladder.Profiles[0].Duration {
				addE(&scenario.Error{File: ladder.Source, Field: fmt.Sprintf("profiles[%d].duration", i),
					Msg: fmt.Sprintf("every rung runs as long as the first (%v), got %v", ladder.Profiles[0].Duration, pr.Duration)})
			}
		}
	}

	var alone []*scenario.Scenario
	for name, s := range byName {
		if !slices.Contains(roleFiles, name) {
			alone = append(alone, s)
		}
	}
	slices.SortFunc(alone, func(a, b *scenario.Scenario) int {
		if d := slices.Index(serviceOrder, a.Service) - slices.Index(serviceOrder, b.Service); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, key := range requiredAlone {
		need("bench-" + key)
	}
	first := byName["bench-details"]
	for _, s := range alone {
		e := Endpoint{Key: strings.TrimPrefix(s.Name, "bench-"), Service: s.Service, Path: s.Path, Title: s.Description, Base: s.Profiles[0]}
		if e.Title == "" {
			e.Title = e.Key
		}
		switch len(s.Profiles) {
		case 1:
		case 2:
			e.Busy = &s.Profiles[1]
		default:
			addE(&scenario.Error{File: s.Source, Field: "profiles", Msg: fmt.Sprintf("want one or two profiles (the base, then a busy one), got %d", len(s.Profiles))})
		}
		// One latency table: every endpoint at the base profile of
		// bench-details, with the same repetitions; the floor runs at it too.
		if first != nil && s != first {
			b := first.Profiles[0]
			if e.Base.Name != b.Name || e.Base.QPS != b.QPS || e.Base.Connections != b.Connections || e.Base.Duration != b.Duration {
				addE(&scenario.Error{File: s.Source, Field: "profiles[0]",
					Msg: fmt.Sprintf("must equal bench-details.yaml's first profile (%s, %g RPS, %d connections, %v): the latency table and the floor share it", b.Name, b.QPS, b.Connections, b.Duration)})
			}
			if s.Repetitions != first.Repetitions || s.Warmup != first.Warmup {
				addE(&scenario.Error{File: s.Source, Field: "repetitions",
					Msg: fmt.Sprintf("repetitions and warmup must equal bench-details.yaml's (%d, %v)", first.Repetitions, first.Warmup)})
			}
		}
		p.Alone = append(p.Alone, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	p.Timing = Timing{
		Rep: first.Profiles[0].Duration.Std(), Warmup: first.Warmup.Std(), Reps: first.Repetitions,
		LadderStep: p.Ladder[0].Duration.Std(), Probe: p.MaxRate.Duration.Std(),
		StackWarmup: p.StackWarmup.Duration.Std(), SoakSample: soakSample, Probes: maxProbes,
	}
	return p, nil
}
