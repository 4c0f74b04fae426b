package runner

import (
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// Step is one engine run: a warmup or a measured repetition.
type Step struct {
	Warmup     bool
	Profile    scenario.Profile
	Target     loadtarget.Target
	Repetition int // 1-based; 0 for a warmup
}

// Plan orders a run. Profiles run one after the other. Within a profile each
// target is warmed up (if warmup is set), then repetition r runs every target
// once, the order rotated by one each repetition (A B C, B C A, C A B, ...):
// slow drift of the machine or the network then spreads over all targets
// instead of landing on whichever ran last, and no target always follows
// the same neighbour.
func Plan(profiles []scenario.Profile, targets []loadtarget.Target, reps int, warmup bool) []Step {
	var steps []Step
	n := len(targets)
	for _, p := range profiles {
		if warmup {
			for _, t := range targets {
				steps = append(steps, Step{Warmup: true, Profile: p, Target: t})
			}
		}
		for r := 1; r <= reps; r++ {
			for i := range n {
				steps = append(steps, Step{Profile: p, Target: targets[(i+r-1)%n], Repetition: r})
			}
		}
	}
	return steps
}
