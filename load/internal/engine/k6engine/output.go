package k6engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
)

// sample is one line of k6's JSON output (`--out json=FILE`) of type Point:
//
//	{"metric":"http_req_duration","type":"Point","data":{"time":"2026-...Z","value":6.7,"tags":{"status":"200",...}}}
//
// Values of time metrics are in milliseconds. Every HTTP httpRequest gives one
// container of samples (http_reqs, http_req_duration, http_req_blocked, ...)
// with the same time (the httpRequest's end) and tags, written on consecutive
// lines; dropped_iterations gives one sample per dropped iteration, at the
// tick it was dropped.
type sample struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	Data   struct {
		Time  string            `json:"time"`
		Value *float64          `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

// httpRequest is one HTTP httpRequest read from the output.
type httpRequest struct {
	end      time.Time
	duration time.Duration // http_req_duration: sending + waiting + receiving
	blocked  time.Duration // http_req_blocked: getting a connection (incl. connecting)
	status   string
}

// start is when the httpRequest asked for a connection: the moment from which
// fortio's latency counts too.
func (r httpRequest) start() time.Time { return r.end.Add(-r.duration - r.blocked) }

// latency is the plain latency bookload records: what fortio measures (from
// asking for a connection to the last byte of the answer).
func (r httpRequest) latency() time.Duration { return r.duration + r.blocked }

// Output accumulates k6's JSON output, line by line (as k6 writes it, for the
// progress line, or all at once).
type Output struct {
	line     int
	requests []httpRequest
	pending  *httpRequest // http_req_duration waiting for its http_req_blocked
	pendLine int
	dropped  []time.Time
	errors   int64
}

// wanted are the metrics read; other lines are only checked to be JSON objects.
var wanted = map[string]bool{"http_req_duration": true, "http_req_blocked": true, "dropped_iterations": true}

// Feed reads one line of output. A line that is not a JSON object, or a
// sample of a wanted metric that lacks its time or value, is an error naming
// the line.
func (o *Output) Feed(line []byte) error {
	o.line++
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] != '{' || line[len(line)-1] != '}' {
		return fmt.Errorf("line %d is not a JSON object: %s", o.line, clip(line))
	}
	if name, ok := metricName(line); ok && !wanted[name] {
		return nil
	}
	var s sample
	if err := json.Unmarshal(line, &s); err != nil {
		return fmt.Errorf("line %d: %w: %s", o.line, err, clip(line))
	}
	if s.Type != "Point" || !wanted[s.Metric] {
		return nil
	}
	if s.Data.Value == nil || s.Data.Time == "" {
		return fmt.Errorf("line %d: %s sample without a time or value: %s", o.line, s.Metric, clip(line))
	}
	t, err := time.Parse(time.RFC3339Nano, s.Data.Time)
	if err != nil {
		return fmt.Errorf("line %d: %s: bad time: %w", o.line, s.Metric, err)
	}
	v := *s.Data.Value
	if math.IsNaN(v) || v < 0 {
		return fmt.Errorf("line %d: %s: bad value %v", o.line, s.Metric, v)
	}
	switch s.Metric {
	case "http_req_duration":
		if o.pending != nil {
			return fmt.Errorf("line %d: http_req_duration of line %d is not followed by its http_req_blocked", o.line, o.pendLine)
		}
		status, ok := s.Data.Tags["status"]
		if !ok {
			return fmt.Errorf("line %d: http_req_duration without a status tag (k6 must run with --system-tags including status)", o.line)
		}
		o.pending = &httpRequest{end: t, duration: ms(v), status: status}
		o.pendLine = o.line
	case "http_req_blocked":
		if o.pending == nil || !o.pending.end.Equal(t) {
			return fmt.Errorf("line %d: http_req_blocked without the http_req_duration of the same httpRequest just before it", o.line)
		}
		r := *o.pending
		r.blocked = ms(v)
		o.pending = nil
		o.requests = append(o.requests, r)
		if !ok2xx(r.status) {
			o.errors++
		}
	case "dropped_iterations":
		for range int(v) {
			o.dropped = append(o.dropped, t)
		}
	}
	return nil
}

// Counts is what was read so far, for the progress line.
func (o *Output) Counts() (requests, errors int64) { return int64(len(o.requests)), o.errors }

// Lines is the number of lines read.
func (o *Output) Lines() int { return o.line }

// metricName reads the metric name of a k6 JSON line cheaply when the line
// starts the way k6 writes it ({"metric":"NAME",...}).
func metricName(line []byte) (string, bool) {
	const prefix = `{"metric":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return "", false
	}
	rest := line[len(prefix):]
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return "", false
	}
	return string(rest[:i]), true
}

func ms(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

func ok2xx(status string) bool {
	c, err := strconv.Atoi(status)
	return err == nil && c >= 200 && c <= 299
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

// Summary is the output turned into bookload's measures.
type Summary struct {
	Requests, Errors int64
	Dropped          int64
	Codes            map[string]int64 // "-1" = no HTTP answer (k6 status 0)
	Latency          latency.Distributions
	// ScheduleStart is the estimated start of the tick grid: when tick 0 was due.
	ScheduleStart time.Time
	// Delay is the scheduling delay of each httpRequest (how late it went out
	// against its tick), in µs: what corrected latency adds to plain.
	Delay *hdrhistogram.Histogram
	// Ticks is how many ticks were seen (requests + dropped iterations).
	Ticks int
	// Durations is k6's own http_req_duration alone (no connection time), µs.
	Durations *hdrhistogram.Histogram
}

// Summarize turns the requests read into histograms. period is the interval
// between two ticks of the constant-arrival-rate executor (0: unknown, then
// corrected latency equals plain).
//
// Corrected latency. k6 does not record when each iteration was due, but the
// constant-arrival-rate executor's ticks are a fixed grid (tick i is due at
// start + i·period, start being the scenario's start) and every tick either
// starts an iteration (here: one httpRequest) or, when every VU is busy, is
// dropped and recorded as a dropped_iterations sample at that moment. So the
// sorted start times of the requests merged with the times of the drops are
// the ticks in order; the i-th of them was due at start + i·period, where
// start is estimated as the earliest (time_i − i·period), i.e. the least late
// tick is taken as on time. A httpRequest's scheduling delay is its start minus
// its tick's due time, and corrected latency = plain + delay. The delay is
// what k6 itself adds when its timer or a VU's goroutine wakes late (a
// starved load generator); a slow server does not delay later requests in
// k6's open model, it makes k6 drop them, and dropped iterations have no
// latency at all: they are counted and reported instead.
func (o *Output) Summarize(period time.Duration) (*Summary, error) {
	if o.pending != nil {
		return nil, fmt.Errorf("line %d: http_req_duration is not followed by its http_req_blocked (output cut short?)", o.pendLine)
	}
	s := &Summary{
		Requests: int64(len(o.requests)), Errors: o.errors, Dropped: int64(len(o.dropped)),
		Codes: map[string]int64{},
		Latency: latency.Distributions{
			Plain: latency.NewHistogram(), Corrected: latency.NewHistogram(),
		},
		Delay: latency.NewHistogram(), Durations: latency.NewHistogram(),
	}
	for _, r := range o.requests {
		code := r.status
		if code == "0" || code == "" {
			code = "-1"
		}
		s.Codes[code]++
	}

	// The ticks: httpRequest starts and drops, in time order.
	type tick struct {
		at  time.Time
		req int // index into o.requests, -1 for a drop
	}
	ticks := make([]tick, 0, len(o.requests)+len(o.dropped))
	for i, r := range o.requests {
		ticks = append(ticks, tick{r.start(), i})
	}
	for _, d := range o.dropped {
		ticks = append(ticks, tick{d, -1})
	}
	sort.SliceStable(ticks, func(a, b int) bool { return ticks[a].at.Before(ticks[b].at) })
	s.Ticks = len(ticks)
	delays := make([]time.Duration, len(o.requests))
	if period > 0 && len(ticks) > 0 {
		// start = min_i (t_i − i·period).
		start := ticks[0].at
		for i, tk := range ticks {
			if due := tk.at.Add(-time.Duration(i) * period); due.Before(start) {
				start = due
			}
		}
		s.ScheduleStart = start
		for i, tk := range ticks {
			if tk.req >= 0 {
				delays[tk.req] = max(tk.at.Sub(start.Add(time.Duration(i)*period)), 0)
			}
		}
	} else if len(ticks) > 0 {
		s.ScheduleStart = ticks[0].at
	}
	for i, r := range o.requests {
		plain := r.latency()
		corr := plain + delays[i]
		_ = s.Latency.Plain.RecordValue(latency.Micros(plain))
		_ = s.Latency.Corrected.RecordValue(latency.Micros(corr))
		_ = s.Delay.RecordValue(latency.Micros(delays[i]))
		_ = s.Durations.RecordValue(latency.Micros(r.duration))
		s.Latency.PlainSum += plain
		s.Latency.CorrectedSum += corr
	}
	return s, nil
}
