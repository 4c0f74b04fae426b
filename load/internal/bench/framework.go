package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
)

// The framework floor: each service's framework serving a constant body
// (the service's own /health, through the same server, worker model,
// routing and metrics middleware as every other route; the plan's framework
// part), measured at a busy rate so idle wake-ups do not dominate. A service
// route costs the floor plus what the service does; the target allows
// framework_factor floors per request for that work, and one more floor per
// upstream call (the client side of a call parses and writes about what
// serving one does).

// upstreamCalls is the apps' call graph: what one request of each service's
// measured route calls (reviews v2 calls ratings; the page calls details and
// reviews).
var upstreamCalls = map[string]int{"details": 0, "ratings": 0, "reviews": 1, "productpage": 2}

// Costed is one service route compared with its framework floor.
type Costed struct {
	Service, Path, Title string
	Upstream             int     // upstream calls per request
	Rate                 float64 // at which the route is measured
	Profile              string  // the busy profile's name, where its row is
	Key                  string  // the endpoint part's name
}

// Routes are the routes set against their framework floor: every endpoint
// with a busy load, one per service.
func (p *Plan) Routes() []Costed {
	var out []Costed
	seen := map[string]bool{}
	for _, e := range p.OfKind("endpoint") {
		if e.Busy == nil || seen[e.Service] {
			continue
		}
		seen[e.Service] = true
		out = append(out, Costed{Service: e.Service, Path: e.Path, Title: e.Title, Upstream: upstreamCalls[e.Service],
			Rate: e.Busy.QPS, Profile: e.Busy.Profile(0).Name, Key: e.Name})
	}
	return out
}

// measureFramework measures the part's path (/health) on every service with
// a route in Routes; the routes at their busy loads are the endpoints'.
func measureFramework(ctx context.Context, b *bench, fw *Part) error {
	for _, r := range b.o.Plan.Routes() {
		s := b.scenario("bench-framework-"+r.Service, r.Service, fw.Path, true, fw.Load.Profile(b.tm.Rep))
		s.Description = fmt.Sprintf("framework floor: %s %s at %g RPS, %s", r.Service, fw.Path, fw.Load.QPS, pattern(true))
		m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", r.Service)})
		if err != nil {
			return err
		}
		b.o.Framework[r.Service] = m
	}
	return nil
}

// Num is a measured number that may be missing (NaN); JSON has no NaN, so
// a missing number is written as null and read back as NaN.
type Num float64

// MarshalJSON writes NaN and infinities as null.
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	var p *float64
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*n = Num(math.NaN())
	if p != nil {
		*n = Num(*p)
	}
	return nil
}

// FrameworkRow is one line of the framework floor table.
type FrameworkRow struct {
	Service  string  `json:"service"`
	Path     string  `json:"path"`
	Title    string  `json:"title"`
	Upstream int     `json:"upstream"`
	Rate     float64 `json:"rate"`
	FloorCPU Num     `json:"floor_cpu_ms"` // /health: the service's CPU ms per request
	FloorP50 Num     `json:"floor_p50_ms"`
	CPU      Num     `json:"cpu_ms"` // the route: the service's own CPU ms per request
	P50      Num     `json:"p50_ms"`
	Factor   float64 `json:"factor"` // framework_factor of bench/plan.yaml
}

// Allowed is the target: Factor floors, plus one floor per upstream call.
func (r FrameworkRow) Allowed() float64 {
	return (r.Factor + float64(r.Upstream)) * float64(r.FloorCPU)
}

// Excess is what the target compares with framework_factor: the route's own
// CPU in floors, less one floor per upstream call.
func (r FrameworkRow) Excess() float64 {
	return float64(r.CPU/r.FloorCPU) - float64(r.Upstream)
}

// Known says both sides were measured.
func (r FrameworkRow) Known() bool {
	return !math.IsNaN(float64(r.FloorCPU)) && !math.IsNaN(float64(r.CPU))
}

// FrameworkRows puts each route next to its framework's floor.
func (o *Outcome) FrameworkRows() []FrameworkRow {
	var rows []FrameworkRow
	floorProfile := o.Plan.first("framework").Load.Profile(0).Name
	for _, c := range o.Plan.Routes() {
		f := o.Framework[c.Service]
		row := FrameworkRow{Service: c.Service, Path: c.Path, Title: c.Title, Upstream: c.Upstream, Rate: c.Rate,
			FloorCPU: Num(f.cpuPerReq("tuned", c.Service)), FloorP50: Num(lat(f.Row(floorProfile, "tuned"), "p50")),
			CPU: Num(math.NaN()), P50: Num(math.NaN()), Factor: o.Plan.Targets.T("framework_factor").Threshold}
		if m := o.AloneBusy[c.Key]; m != nil {
			row.CPU, row.P50 = Num(m.cpuPerReq("tuned", c.Service)), Num(lat(m.Row(c.Profile, "tuned"), "p50"))
		}
		rows = append(rows, row)
	}
	return rows
}

// Summary is what one bench keeps for a later one to set beside its own
// numbers (`bookload bench --before <out>/summary.json`): what a reader
// compares across a change of the apps.
type Summary struct {
	Started    string             `json:"started"`
	Apps       string             `json:"apps"` // the measured checkout's commit
	Speed      []SpeedCheck       `json:"speed"`
	Framework  []FrameworkRow     `json:"framework"`
	PageP50    Num                `json:"page_p50_ms"` // full page 100/10, uniform
	PageP99    Num                `json:"page_p99_ms"`
	PageCPU    Num                `json:"page_cpu_ms"` // all services, per page, at 100/10 uniform
	MaxRate    Num                `json:"max_rate"`
	MaxRateCPU Num                `json:"max_rate_cpu_ms"` // all services, per page, at the best held probe
	TotalRSSMB Num                `json:"total_rss_mb"`
	RSSMB      map[string]float64 `json:"service_rss_mb"`
}

// Summarize gathers the Summary of o.
func (o *Outcome) Summarize(apps string) Summary {
	nan := Num(math.NaN())
	s := Summary{Started: o.Started.UTC().Format("2006-01-02 15:04"), Apps: apps, Speed: o.Speed, Framework: o.FrameworkRows(),
		PageP50: nan, PageP99: nan, PageCPU: nan, MaxRateCPU: nan, RSSMB: map[string]float64{}}
	if m := o.pageMeasure(true); m != nil {
		r := m.Row(o.baseProfile(), "tuned")
		s.PageP50, s.PageP99, s.PageCPU = Num(lat(r, "p50")), Num(lat(r, "p99")), Num(m.stackCPUPerReq("tuned"))
	}
	best, _ := o.MaxSustained()
	s.MaxRate = Num(best)
	for _, p := range o.MaxRate {
		if p.OK(o.Plan.Targets) && p.Rate == best && p.Measure != nil {
			s.MaxRateCPU = Num(p.Measure.stackCPUPerReq("tuned"))
		}
	}
	var total float64
	for svc, u := range o.Usage["tuned"] {
		s.RSSMB[svc] = float64(u.HWMkB) / 1024
		total += float64(u.HWMkB) / 1024
	}
	s.TotalRSSMB = Num(total)
	return s
}

// WriteSummary writes path atomically.
func WriteSummary(path string, s Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadSummary reads a summary.json written by an earlier bench.
func ReadSummary(path string) (Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Summary{}, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(s.Framework) == 0 {
		return Summary{}, fmt.Errorf("%s: no \"framework\" rows: not a summary.json of bookload bench", path)
	}
	return s, nil
}

// SummaryPath is where a bench with output directory out keeps its Summary.
func SummaryPath(out string) string { return filepath.Join(out, "summary.json") }
