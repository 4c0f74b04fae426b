package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// How the targets share a repetition.
//
// Alternate runs them one after the other, rotated each repetition: a pair
// of repetitions shares the machine's drift over seconds. Concurrent loads
// them all at once, each at its share of the profile's rate and
// connections: a pair then shares the machine's state at every instant
// (its other processes, its CPU frequency, a neighbour's burst), which
// cancels in the difference; what it cannot share is contention between
// the targets themselves, which for targets with one stack behind them
// (two proxies in front of one page, two namespaces of one cluster) is
// the same for both.
const (
	Alternate  = "alternate"
	Concurrent = "concurrent"
)

// Interleaves lists the choices, for flags and errors.
var Interleaves = []string{Alternate, Concurrent}

// Share is p for one of k targets loaded at once: the rate divided by k,
// and the connections, which must divide evenly (checkInterleave).
func Share(p scenario.Profile, k int) scenario.Profile {
	p.QPS /= float64(k)
	p.Connections /= k
	return p
}

func checkInterleave(how string, s *scenario.Scenario, targets int) error {
	switch how {
	case Alternate:
		return nil
	case Concurrent:
	default:
		return fmt.Errorf("interleave %q: want %s or %s", how, Alternate, Concurrent)
	}
	for _, p := range s.Profiles {
		if p.Connections%targets != 0 {
			return fmt.Errorf("interleave concurrent: profile %s has %d connections, which %d targets loaded at once cannot share evenly",
				p.Name, p.Connections, targets)
		}
	}
	return nil
}

type outcome struct {
	res *engine.Result
	err error
}

// runTogether runs a round's steps at once, each on its target's engine,
// and returns their outcomes by step index (first+k); live follows the
// round's first step.
func runTogether(ctx context.Context, round []Step, first int, request func(Step) engine.Request,
	engines map[string]engine.Engine, live func(engine.Live)) map[int]outcome {
	out := make([]outcome, len(round))
	var wg sync.WaitGroup
	for k, st := range round {
		l := live
		if k > 0 {
			l = nil
		}
		wg.Go(func() {
			res, err := engines[st.Target.Name].Run(ctx, request(st), l)
			out[k] = outcome{res, err}
		})
	}
	wg.Wait()
	m := make(map[int]outcome, len(round))
	for k, o := range out {
		m[first+k] = o
	}
	return m
}
