package runner

import (
	"fmt"
	"strings"
	"time"
)

// DefaultCap is the most repetitions an --until-decided run plans per
// profile when --repetitions does not say.
const DefaultCap = 200

// Until is asked after each round of a sequential run (one repetition of
// every target of a profile): are the verdicts asked for in that profile
// decided? open describes those still open. It reads the run directory, so
// the decision is the one `bookload compare` would print.
type Until func(dir, profile string) (decided bool, open []string, err error)

// sequential keeps a run's budget: each profile may spend an equal share of
// what the profiles before it left, and a round starts only if it fits.
type sequential struct {
	budget    time.Duration
	profiles  int // not yet started
	spent     time.Duration
	start     time.Time // of the current profile
	share     time.Duration
	round     time.Duration // the longest round so far in this profile
	roundFrom time.Time
	open      []string
}

func (q *sequential) startProfile(now time.Time) {
	q.start, q.round, q.open = now, 0, nil
	q.share = (q.budget - q.spent) / time.Duration(max(q.profiles, 1))
	q.profiles--
}

// fits says whether one more round, as long as the longest so far (or
// guess before any), fits in the profile's share.
func (q *sequential) fits(now time.Time, guess time.Duration) bool {
	q.roundFrom = now
	return now.Sub(q.start)+max(q.round, guess) <= q.share
}

func (q *sequential) endRound(now time.Time) {
	q.round = max(q.round, now.Sub(q.roundFrom))
}

func (q *sequential) endProfile(now time.Time) { q.spent += now.Sub(q.start) }

// why is the run.json note for a profile that stopped after reps rounds.
func (q *sequential) why(reason string, reps int, now time.Time) string {
	s := fmt.Sprintf("%s after %d repetitions, %s of its %s budget share", reason, reps,
		now.Sub(q.start).Round(time.Second), q.share.Round(time.Second))
	if len(q.open) > 0 {
		s += "; still open: " + strings.Join(q.open, "; ")
	}
	return s
}

// roundEdges reports whether step i begins and whether it ends a round: all
// targets' repetition r of one profile (or all their warm-ups).
func roundEdges(steps []Step, i int) (begins, ends bool) {
	same := func(j int) bool {
		return j >= 0 && j < len(steps) && steps[j].Warmup == steps[i].Warmup &&
			steps[j].Profile.Name == steps[i].Profile.Name && steps[j].Repetition == steps[i].Repetition
	}
	return !same(i - 1), !same(i + 1)
}
