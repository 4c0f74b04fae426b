package results

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
)

// NewRep turns an engine result into the stored form.
func NewRep(req engine.Request, res *engine.Result, tool Tool, machine Machine) (*Rep, error) {
	plain, err := distribution(res.Latency.Plain, res.Latency.PlainSum)
	if err != nil {
		return nil, err
	}
	corr, err := distribution(res.Latency.Corrected, res.Latency.CorrectedSum)
	if err != nil {
		return nil, err
	}
	var hopsDoc *hops.Doc
	if res.Hops != nil && res.Hops.Requests > 0 {
		if hopsDoc, err = res.Hops.Doc(); err != nil {
			return nil, err
		}
	}
	return &Rep{
		Hops:            hopsDoc,
		SchemaVersion:   SchemaVersion,
		Scenario:        req.Scenario.Name,
		Target:          req.Target.Name,
		TargetURL:       req.Target.URL,
		Profile:         req.Profile,
		Repetition:      req.Repetition,
		Engine:          res.Engine,
		Start:           res.Start.UTC(),
		DurationSeconds: res.Duration.Seconds(),
		RequestedQPS:    res.RequestedQPS,
		ActualQPS:       res.ActualQPS,
		Requests:        res.Requests,
		Errors:          res.Errors,
		Codes:           res.Codes,
		Latency:         Latency{Plain: plain, Corrected: corr},
		Labels:          req.Labels,
		Knobs:           req.Target.Knobs,
		EngineMetadata:  res.Metadata,
		Tool:            tool,
		Machine:         machine,
	}, nil
}

func distribution(h *hdrhistogram.Histogram, sum time.Duration) (Distribution, error) {
	if h == nil {
		h = latency.NewHistogram()
	}
	enc, err := latency.Encode(h)
	if err != nil {
		return Distribution{}, err
	}
	return Distribution{SummaryMS: latency.Summarize(h, sum), HdrHistogram: enc}, nil
}
