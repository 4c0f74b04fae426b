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
// routing and metrics middleware as every other route), measured at
// BusyRate so idle wake-ups do not dominate. A service route costs the
// floor plus what the service does; the target allows FrameworkFactor
// floors per request for that work, and one more floor per upstream call
// (the client side of a call parses and writes about what serving one does).
const (
	FrameworkFactor = 1.5
	// PageRate is the rate at which productpage's own CPU per page is read
	// for that comparison: the maximum sustainable rate the targets ask for.
	PageRate = 500.0
)

// Costed is one service route compared with its framework floor.
type Costed struct {
	Service, Path, Title string
	Upstream             int     // upstream calls per request
	Rate                 float64 // at which the route is measured
}

// Routes are the routes set against their framework floor.
var Routes = []Costed{
	{"details", "/details/0", "details", 0, BusyRate},
	{"ratings", "/ratings/0", "ratings", 0, BusyRate},
	{"reviews", "/reviews/0", "reviews v2 (calls ratings)", 1, BusyRate},
	{"productpage", "/productpage", "productpage full page (calls details and reviews)", 2, PageRate},
}

// frameworkFloor measures /health of every service, then productpage's
// full page at PageRate (the leaf routes at BusyRate are AloneBusy).
func (b *bench) frameworkFloor(ctx context.Context) error {
	for _, r := range Routes {
		s := b.scenario("bench-framework-"+r.Service, r.Service, "/health", true, profile(BusyRate, 10, b.tm.Rep))
		s.Description = fmt.Sprintf("framework floor: %s /health at %g RPS, %s", r.Service, BusyRate, pattern(true))
		m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", r.Service)})
		if err != nil {
			return err
		}
		b.o.Framework[r.Service] = m
	}
	s := b.scenario("bench-page-busy", "productpage", "/productpage", true, profile(PageRate, conns(PageRate), b.tm.Rep))
	s.Description = fmt.Sprintf("full page at %g RPS, %s", PageRate, pattern(true))
	m, err := b.measure(ctx, s, []loadtarget.Target{b.targetOf("tuned", "productpage")})
	if err != nil {
		return err
	}
	b.o.PageBusy = m
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
}

// Allowed is the target: FrameworkFactor floors, plus one floor per upstream call.
func (r FrameworkRow) Allowed() float64 {
	return (FrameworkFactor + float64(r.Upstream)) * float64(r.FloorCPU)
}

// Known says both sides were measured.
func (r FrameworkRow) Known() bool {
	return !math.IsNaN(float64(r.FloorCPU)) && !math.IsNaN(float64(r.CPU))
}

// FrameworkRows puts each route next to its framework's floor.
func (o *Outcome) FrameworkRows() []FrameworkRow {
	var rows []FrameworkRow
	for _, c := range Routes {
		f := o.Framework[c.Service]
		row := FrameworkRow{Service: c.Service, Path: c.Path, Title: c.Title, Upstream: c.Upstream, Rate: c.Rate,
			FloorCPU: Num(f.cpuPerReq("tuned", c.Service)), FloorP50: Num(lat(f.Row(busyProfile, "tuned"), "p50")),
			CPU: Num(math.NaN()), P50: Num(math.NaN())}
		m, prof := o.AloneBusy[c.Service], busyProfile
		if c.Service == "productpage" {
			m, prof = o.PageBusy, fmt.Sprintf("%grps-%dc", PageRate, conns(PageRate))
		}
		if m != nil {
			row.CPU, row.P50 = Num(m.cpuPerReq("tuned", c.Service)), Num(lat(m.Row(prof, "tuned"), "p50"))
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
	if m := o.Alone["page"][true]; m != nil {
		r := m.Row("100rps-10c", "tuned")
		s.PageP50, s.PageP99, s.PageCPU = Num(lat(r, "p50")), Num(lat(r, "p99")), Num(m.stackCPUPerReq("tuned"))
	}
	best, _ := o.MaxSustained()
	s.MaxRate = Num(best)
	for _, p := range o.MaxRate {
		if p.OK() && p.Rate == best && p.Measure != nil {
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
