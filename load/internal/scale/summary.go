package scale

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fanout"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// spreadOf reads engine_metadata["spread"] back.
func spreadOf(md map[string]any) (fanout.SpreadStats, int, bool) {
	var s fanout.SpreadStats
	b, err := json.Marshal(md["spread"])
	if err != nil || json.Unmarshal(b, &s) != nil || md["spread"] == nil {
		return s, 0, false
	}
	n, _ := md["members"].(float64)
	return s, int(n), true
}

// WriteSummary prints the scale tables of the stored runs: per repetition
// the totals and merged latency, the spread between namespaces, and the
// cluster's cost.
func WriteSummary(w io.Writer, runs []*results.Loaded) error {
	var lat, spread strings.Builder
	fmt.Fprintln(&lat, "| target | rep | namespaces | requests | errors | qps | p50 | p90 | p99 | p99.9 | corr p50 | corr p90 | corr p99 | corr p99.9 |")
	fmt.Fprintln(&lat, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Fprintln(&spread, "| target | rep | p50 min / med / max | p99 min / med / max | worst p99 | corr p99 max (worst) | qps min / med / max | lowest qps | most errors |")
	fmt.Fprintln(&spread, "|---|---:|---|---|---|---|---|---|---|")
	var nSpread int
	var all []results.Rep
	for _, run := range runs {
		for _, r := range run.Reps {
			p, c := r.Latency.Plain.SummaryMS, r.Latency.Corrected.SummaryMS
			sp, members, ok := spreadOf(r.EngineMetadata)
			ns := "1"
			if ok {
				ns = fmt.Sprint(members)
			}
			fmt.Fprintf(&lat, "| %s | %d | %s | %d | %d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				r.Target, r.Repetition, ns, r.Requests, r.Errors, r.ActualQPS,
				ms(p.P50), ms(p.P90), ms(p.P99), ms(p.P999), ms(c.P50), ms(c.P90), ms(c.P99), ms(c.P999))
			if ok {
				nSpread++
				errs := "none"
				if sp.MostErrors != "" {
					errs = fmt.Sprintf("%s (%d)", sp.MostErrors, sp.MostErrorsCount)
				}
				fmt.Fprintf(&spread, "| %s | %d | %s / %s / %s | %s / %s / %s | %s | %s (%s) | %.1f / %.1f / %.1f | %s | %s |\n",
					r.Target, r.Repetition, ms(sp.P50.Min), ms(sp.P50.Median), ms(sp.P50.Max),
					ms(sp.P99.Min), ms(sp.P99.Median), ms(sp.P99.Max), sp.P99.Worst,
					ms(sp.CorrectedP99.Max), sp.CorrectedP99.Worst,
					sp.ActualQPS.Min, sp.ActualQPS.Median, sp.ActualQPS.Max, sp.ActualQPS.Worst, errs)
			}
			all = append(all, r)
		}
	}
	fmt.Fprintln(w, "### Scale: all namespaces together (latency in ms from the merged HdrHistograms)")
	fmt.Fprintln(w)
	fmt.Fprint(w, lat.String())
	if nSpread > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "### Spread between namespaces (per-namespace values, ms and qps)")
		fmt.Fprintln(w)
		fmt.Fprint(w, spread.String())
	}
	fmt.Fprintln(w)
	clustercost.WriteTable(w, all)
	return nil
}

func ms(v float64) string { return fmt.Sprintf("%.2f", v) }
