// Package smp writes a stored run in the Service Mesh Performance (SMP)
// format: a PerformanceTestConfig per profile and a PerformanceTestResult
// per (profile, target), as the messages of SMP's
// protos/service_mesh_performance.proto (package smp, release v0.6.1)
// read in JSON with their proto field names (smp_version, latencies_ms,
// actual_qps, ...), which protobuf's JSON parsers accept.
//
// SMP has one latency summary per test and no repetitions, intervals,
// p75, p99.9, corrected latency or errors. Those stay in bookload's own
// object beside each SMP message, never inside it, so that a strict SMP
// parser reads every SMP object unchanged:
//
//	{"smp_version": "v0.6.1", "run": ID,
//	 "configs": [PerformanceTestConfig...],
//	 "results": [{"performance_test_result": {...}, "bookload": {...}}...]}
//
// The numbers are compare's (one place computes them): SMP's average, p50,
// p90 and p99 are the medians across repetitions of the table, min and max
// the extremes over all repetitions, actual_qps the median achieved rate.
package smp

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
)

// Version is the SMP release whose messages this package writes.
const Version = "v0.6.1"

// Document is what `bookload export --format smp` writes.
type Document struct {
	SMPVersion string   `json:"smp_version"`
	Run        string   `json:"run"`
	Configs    []Config `json:"configs"`
	Results    []Entry  `json:"results"`
}

// Config is SMP's PerformanceTestConfig.
type Config struct {
	SMPVersion string            `json:"smp_version"`
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Labels     map[string]string `json:"labels,omitempty"`
	Clients    []Client          `json:"clients"`
	Duration   string            `json:"duration"`
}

// Client is SMP's PerformanceTestConfig.Client.
type Client struct {
	LoadGenerator string            `json:"load_generator"`
	Protocol      string            `json:"protocol"`
	Connections   int               `json:"connections"`
	RPS           int64             `json:"rps"`
	Headers       map[string]string `json:"headers,omitempty"`
	EndpointURLs  []string          `json:"endpoint_urls"`
}

// Entry is one (profile, target): SMP's result and bookload's fields.
type Entry struct {
	Result   Result `json:"performance_test_result"`
	Bookload Extra  `json:"bookload"`
}

// Result is SMP's PerformanceTestResult.
type Result struct {
	SMPVersion   string            `json:"smp_version"`
	ID           string            `json:"id"`
	Labels       map[string]string `json:"labels,omitempty"`
	StartTime    time.Time         `json:"start_time"`
	EndTime      time.Time         `json:"end_time"`
	LatenciesMS  Latency           `json:"latencies_ms"`
	ActualQPS    float64           `json:"actual_qps"`
	TestID       string            `json:"test_id"`
	MeshConfigID string            `json:"mesh_config_id"`
}

// Latency is SMP's PerformanceTestResult.Latency, in ms.
type Latency struct {
	Min     float64 `json:"min"`
	Average float64 `json:"average"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// Extra is what SMP lacks: compare's row (medians of every metric with their
// intervals, plain and corrected, the change against the baseline, the
// paired difference and verdict, warnings) and each repetition.
type Extra struct {
	compare.Row
	Engine      string       `json:"engine"`
	Repetitions []Repetition `json:"repetitions"`
}

// Repetition is one repetition's own numbers.
type Repetition struct {
	Repetition int             `json:"repetition"`
	Start      time.Time       `json:"start"`
	ActualQPS  float64         `json:"actual_qps"`
	Requests   int64           `json:"requests"`
	Errors     int64           `json:"errors"`
	Plain      latency.Summary `json:"latency_ms"`
	Corrected  latency.Summary `json:"corrected_latency_ms"`
}

// Export converts one run, compared as `bookload compare` would with opts.
func Export(l *results.Loaded, opts compare.Options) (*Document, error) {
	t, err := compare.Build([]*results.Loaded{l}, opts)
	if err != nil {
		return nil, err
	}
	run := l.Run
	doc := &Document{SMPVersion: Version, Run: run.ID}
	urls := map[string]string{}
	for _, tg := range run.Targets {
		urls[tg.Name] = tg.URL
	}
	headers := map[string]string{}
	for _, h := range run.Scenario.Headers {
		headers[h.Name] = h.Value
	}
	for _, p := range run.Scenario.Profiles {
		c := Config{SMPVersion: Version, ID: run.ID + "/" + p.Name, Name: run.Scenario.Name + " " + p.Name,
			Labels:   labels(run.Labels, map[string]string{"scenario": run.Scenario.Name, "profile": p.Name, "service": run.Scenario.Service}),
			Duration: p.Duration.Std().String()}
		for _, tg := range run.Targets {
			c.Clients = append(c.Clients, Client{LoadGenerator: run.Engines[tg.Name], Protocol: "PROTOCOL_HTTP",
				Connections: p.Connections, RPS: int64(p.QPS), Headers: headers, EndpointURLs: []string{tg.URL + run.Scenario.Path}})
		}
		doc.Configs = append(doc.Configs, c)
	}
	for _, row := range t.Rows {
		reps := t.Reps(row)
		e := Entry{Bookload: Extra{Row: row, Engine: reps[0].Engine}}
		lat := Latency{Min: reps[0].Latency.Plain.SummaryMS.Min, Max: reps[0].Latency.Plain.SummaryMS.Max,
			Average: row.LatencyMS["avg"], P50: row.LatencyMS["p50"], P90: row.LatencyMS["p90"], P99: row.LatencyMS["p99"]}
		var start, end time.Time
		for i, r := range reps {
			s := r.Latency.Plain.SummaryMS
			lat.Min, lat.Max = min(lat.Min, s.Min), max(lat.Max, s.Max)
			stop := r.Start.Add(time.Duration(r.DurationSeconds * float64(time.Second)))
			if i == 0 || r.Start.Before(start) {
				start = r.Start
			}
			if stop.After(end) {
				end = stop
			}
			e.Bookload.Repetitions = append(e.Bookload.Repetitions, Repetition{Repetition: r.Repetition, Start: r.Start.UTC(),
				ActualQPS: r.ActualQPS, Requests: r.Requests, Errors: r.Errors, Plain: s, Corrected: r.Latency.Corrected.SummaryMS})
		}
		e.Result = Result{SMPVersion: Version, ID: run.ID + "/" + row.Profile + "/" + row.Target,
			Labels:    labels(run.Labels, map[string]string{"scenario": row.Scenario, "profile": row.Profile, "target": row.Target, "engine": e.Bookload.Engine, "url": urls[row.Target]}),
			StartTime: start.UTC(), EndTime: end.UTC(), LatenciesMS: lat, ActualQPS: row.QPS, TestID: run.ID, MeshConfigID: row.Target}
		doc.Results = append(doc.Results, e)
	}
	if len(doc.Results) == 0 {
		return nil, fmt.Errorf("%s: no finished repetition to export", l.Dir)
	}
	return doc, nil
}

func labels(run, own map[string]string) map[string]string {
	out := maps.Clone(run)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range own {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// Write writes the document as indented JSON.
func (d *Document) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}
