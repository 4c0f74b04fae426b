package fanout

import "sort"

// Stat is the spread of one per-member value across members.
type Stat struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	// Worst names the member with the worst value: the highest latency, the
	// lowest achieved rate.
	Worst string `json:"worst"`
}

// SpreadStats is engine_metadata["spread"].
type SpreadStats struct {
	P50          Stat `json:"p50_ms"`
	P99          Stat `json:"p99_ms"`
	CorrectedP99 Stat `json:"corrected_p99_ms"`
	ActualQPS    Stat `json:"actual_qps"`
	// MostErrors names the member with the most errors ("" when none has any).
	MostErrors      string `json:"most_errors,omitempty"`
	MostErrorsCount int64  `json:"most_errors_count,omitempty"`
}

// Spread summarizes members.
func Spread(members []MemberStats) SpreadStats {
	var s SpreadStats
	if len(members) == 0 {
		return s
	}
	s.P50 = stat(members, func(m MemberStats) float64 { return m.P50 }, true)
	s.P99 = stat(members, func(m MemberStats) float64 { return m.P99 }, true)
	s.CorrectedP99 = stat(members, func(m MemberStats) float64 { return m.CorrectedP99 }, true)
	s.ActualQPS = stat(members, func(m MemberStats) float64 { return m.ActualQPS }, false)
	for _, m := range members {
		if m.Errors > s.MostErrorsCount {
			s.MostErrors, s.MostErrorsCount = m.Namespace, m.Errors
		}
	}
	return s
}

// stat is min, median (the mean of the middle two for an even count) and
// max of f over members; the worst is the max when highWorse, else the min
// (ties: the first by name).
func stat(members []MemberStats, f func(MemberStats) float64, highWorse bool) Stat {
	idx := make([]int, len(members))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return f(members[idx[a]]) < f(members[idx[b]]) })
	n := len(idx)
	med := f(members[idx[n/2]])
	if n%2 == 0 {
		med = (f(members[idx[n/2-1]]) + med) / 2
	}
	st := Stat{Min: f(members[idx[0]]), Median: med, Max: f(members[idx[n-1]])}
	worst := members[idx[0]]
	if highWorse {
		// the first by name among those with the max value
		worst = members[idx[n-1]]
		for _, i := range idx {
			if f(members[i]) == st.Max {
				worst = members[i]
				break
			}
		}
	}
	st.Worst = worst.Namespace
	return st
}
