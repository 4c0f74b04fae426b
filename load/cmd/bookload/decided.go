package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
)

// untilDecided is --until-decided: the runner's stop rule, which judges the
// run directory as `bookload compare` would after each round, and the record
// run.json keeps of it (which makes compare use the sequential intervals).
func untilDecided(baseline string, margins, precision compare.Margins, parts partPrecision, decide string, targets []loadtarget.Target, budget time.Duration) (runner.Until, *results.Sequential, error) {
	var metrics []string
	for _, m := range strings.Split(decide, ",") {
		if m = strings.TrimSpace(m); m == "" {
			continue
		}
		if _, ok := margins[m]; !ok {
			return nil, nil, fmt.Errorf("--decide %s: it has no --margin", m)
		}
		metrics = append(metrics, m)
	}
	switch {
	case len(margins) == 0 && len(precision) == 0 && len(parts) == 0:
		return nil, nil, errors.New("--until-decided needs --margin METRIC=DURATION (the verdicts it waits for), or --precision or --part-precision (the intervals it narrows)")
	case len(targets) < 2:
		return nil, nil, errors.New("--until-decided needs two targets or more: a baseline and what it is compared with")
	case budget <= 0:
		return nil, nil, fmt.Errorf("--budget %v: must be above zero", budget)
	}
	if baseline == "" {
		baseline = targets[0].Name
	}
	if !slices.ContainsFunc(targets, func(t loadtarget.Target) bool { return t.Name == baseline }) {
		return nil, nil, fmt.Errorf("--baseline %s: not one of the targets", baseline)
	}
	rule := compare.StopRule{Baseline: baseline, Margins: margins, Decide: metrics, Precision: precision, Parts: parts}
	return rule.Until(), &results.Sequential{Baseline: baseline, MarginsMS: margins, PrecisionMS: precision, PartsPrecisionMS: parts, BudgetSeconds: budget.Seconds()}, nil
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// partPrecision is --part-precision KEY=DURATION, repeatable: a waterfall
// part (hop:client, hop:details, server:reviews, ...) whose p50 difference
// must reach an interval that narrow.
type partPrecision map[string]float64

func (p partPrecision) String() string { return "" }

func (p partPrecision) Set(v string) error {
	key, val, ok := strings.Cut(v, "=")
	isPart := strings.HasPrefix(key, "hop:") || strings.HasPrefix(key, "server:")
	if !ok || !isPart || len(key) < 5 {
		return fmt.Errorf("want PART=DURATION with PART a waterfall part such as hop:client or server:details, e.g. hop:client=0.1ms")
	}
	d, err := time.ParseDuration(val)
	if err != nil || d <= 0 {
		return fmt.Errorf("%s: %q is not a duration above zero (e.g. 0.1ms)", key, val)
	}
	if _, dup := p[key]; dup {
		return fmt.Errorf("%s given twice", key)
	}
	p[key] = float64(d) / float64(time.Millisecond)
	return nil
}
