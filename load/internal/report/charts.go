package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
)

// Chart sizes.
const (
	chartW = 7.5 * vg.Inch
	chartH = 4.2 * vg.Inch
	pngDPI = 144
)

// Chart is one plot: built on demand (gonum/plot draws it), rendered to an
// inline SVG for the HTML and to PNG for --png.
type Chart struct {
	// File is the PNG file name, without directory: <scenario>_<profile>_<kind>.png.
	File  string
	Title string
	// Kind is percentiles, summary or ladder.
	Kind  string
	build func() (*plot.Plot, error)
}

func init() {
	// A sans-serif font reads better on screen; gonum/plot measures text with
	// its embedded Liberation fonts, which browsers are told to fall back from
	// (see fontFallback).
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// SVG renders the chart as an <svg> element (no XML prolog), fonts not
// embedded: the page stays small and needs nothing from the network.
func (c *Chart) SVG() (string, error) {
	p, err := c.build()
	if err != nil {
		return "", err
	}
	canvas := vgsvg.New(chartW, chartH)
	p.Draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	// Scale with the page: drop the fixed size, keep the viewBox.
	s = svgSize.ReplaceAllString(s, `<svg role="img" aria-label="`+htmlAttr(c.Title)+`" class="chart" data-kind="`+c.Kind+`"`)
	return fontFallback.ReplaceAllString(s, "font-family:${1},Arial,Helvetica,sans-serif;"), nil
}

var (
	svgSize      = regexp.MustCompile(`^<svg width="[^"]*" height="[^"]*"`)
	fontFallback = regexp.MustCompile(`font-family:([^;,"]+);`)
)

func htmlAttr(s string) string {
	r := strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;")
	return r.Replace(s)
}

// PNG renders the chart as a PNG image.
func (c *Chart) PNG() ([]byte, error) {
	p, err := c.build()
	if err != nil {
		return nil, err
	}
	canvas := vgimg.NewWith(vgimg.UseWH(chartW, chartH), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// series is one target's data in a profile.
type series struct {
	name      string
	row       compare.Row
	plain     *hdrhistogram.Histogram // all repetitions merged
	corrected *hdrhistogram.Histogram
}

// percentileTicks label the log-scaled 1/(1−q) axis as HdrHistogram plots do.
var percentileTicks = []struct {
	x     float64
	label string
}{{1, "0%"}, {2, "50%"}, {10, "90%"}, {100, "99%"}, {1000, "99.9%"}, {1e4, "99.99%"}, {1e5, "99.999%"}, {1e6, "99.9999%"}}

// percentilePoints samples h's latency (ms) by percentile q at x = 1/(1−q),
// log-spaced from 0% up to the highest percentile the count supports.
func percentilePoints(h *hdrhistogram.Histogram) plotter.XYs {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	maxX := math.Min(float64(n), 1e6)
	const steps = 160
	var pts plotter.XYs
	for i := 0; i <= steps; i++ {
		x := math.Pow(maxX, float64(i)/steps)
		q := 100 * (1 - 1/x)
		pts = append(pts, plotter.XY{X: x, Y: float64(h.ValueAtQuantile(q)) / 1000})
	}
	return pts
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

// headroom raises the top of the y axis so that the legend (top left, one
// line per entry) sits above the data instead of over it.
func headroom(p *plot.Plot, entries int, logY bool) {
	f := 0.08 * float64(entries+1)
	if logY {
		if p.Y.Min > 0 && p.Y.Max > p.Y.Min {
			p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, f)
		}
		return
	}
	p.Y.Max += (p.Y.Max - p.Y.Min) * f
}

// dashedKey is a legend entry that explains the dashed lines.
func dashedKey(p *plot.Plot, label string) error {
	l, err := plotter.NewLine(plotter.XYs{})
	if err != nil {
		return err
	}
	l.Color = color.Gray{Y: 90}
	l.Width = vg.Points(1.2)
	l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Legend.Add(label, l)
	return nil
}

// percentileChart: latency by percentile, one line per target (plain; the
// corrected latency dashed where it differs).
func percentileChart(file, title string, ss []series) *Chart {
	return &Chart{File: file, Title: title, Kind: "percentiles", build: func() (*plot.Plot, error) {
		p := newPlot(title, "percentile (log scale of 1/(1−p))", "latency (ms)")
		p.X.Scale = plot.LogScale{}
		maxX := 1.0
		for _, s := range ss {
			maxX = math.Max(maxX, math.Min(float64(s.plain.TotalCount()), 1e6))
		}
		var ticks []plot.Tick
		for _, t := range percentileTicks {
			if t.x <= maxX*1.01 {
				ticks = append(ticks, plot.Tick{Value: t.x, Label: t.label})
			}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = 1, maxX
		p.Y.Min = 0
		dashed := false
		for i, s := range ss {
			pts := percentilePoints(s.plain)
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.8)
			p.Add(l)
			p.Legend.Add(s.name, l)
			if differs(s.plain, s.corrected) {
				cl, err := plotter.NewLine(percentilePoints(s.corrected))
				if err != nil {
					return nil, err
				}
				cl.Color = plotutil.Color(i)
				cl.Width = vg.Points(1.2)
				cl.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				p.Add(cl)
				dashed = true
			}
		}
		entries := len(ss)
		if dashed {
			entries++
			if err := dashedKey(p, "dashed: corrected for coordinated omission"); err != nil {
				return nil, err
			}
		}
		headroom(p, entries, false)
		return p, nil
	}}
}

// differs: corrected latency worth drawing (p99 or p99.9 more than 5% above plain).
func differs(plain, corr *hdrhistogram.Histogram) bool {
	if corr == nil || corr.TotalCount() == 0 {
		return false
	}
	for _, q := range []float64{99, 99.9} {
		a, b := float64(plain.ValueAtQuantile(q)), float64(corr.ValueAtQuantile(q))
		if b > 1.05*a+50 { // µs
			return true
		}
	}
	return false
}

// errPoints are medians with their confidence intervals.
type errPoints struct {
	plotter.XYs
	lo, hi []float64 // distance below and above
}

func (e errPoints) YError(i int) (float64, float64) { return e.lo[i], e.hi[i] }

// summaryMetrics are the summary chart's categories.
var summaryMetrics = []string{"p50", "p90", "p99"}

// summaryChart: p50, p90 and p99 of each target, the median across
// repetitions with its confidence interval as error bars.
func summaryChart(file, title string, ss []series, ciConf float64) *Chart {
	return &Chart{File: file, Title: title, Kind: "summary", build: func() (*plot.Plot, error) {
		p := newPlot(title, fmt.Sprintf("median across repetitions, bars: %.0f%% confidence interval of the median", 100*ciConf), "latency (ms)")
		lo, hi := math.Inf(1), 0.0
		for _, s := range ss {
			for _, m := range summaryMetrics {
				ci := s.row.LatencyCIMS[m]
				lo, hi = math.Min(lo, math.Max(ci[0], 1e-3)), math.Max(hi, ci[1])
			}
		}
		logY := hi/lo > 20
		if logY {
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		} else {
			p.Y.Min = 0
		}
		var ticks []plot.Tick
		for j, m := range summaryMetrics {
			ticks = append(ticks, plot.Tick{Value: float64(j), Label: m})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = -0.5, float64(len(summaryMetrics))-0.5
		width := 0.6
		for i, s := range ss {
			off := 0.0
			if len(ss) > 1 {
				off = -width/2 + width*float64(i)/float64(len(ss)-1)
			}
			var e errPoints
			for j, m := range summaryMetrics {
				med, ci := s.row.LatencyMS[m], s.row.LatencyCIMS[m]
				if logY {
					med, ci[0] = math.Max(med, 1e-3), math.Max(ci[0], 1e-3)
				}
				e.XYs = append(e.XYs, plotter.XY{X: float64(j) + off, Y: med})
				e.lo = append(e.lo, math.Max(med-ci[0], 0))
				e.hi = append(e.hi, math.Max(ci[1]-med, 0))
			}
			sc, err := plotter.NewScatter(e.XYs)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle.Color = plotutil.Color(i)
			sc.GlyphStyle.Shape = plotutil.Shape(i)
			sc.GlyphStyle.Radius = vg.Points(4)
			bars, err := plotter.NewYErrorBars(e)
			if err != nil {
				return nil, err
			}
			bars.Color = plotutil.Color(i)
			bars.Width = vg.Points(1.5)
			bars.CapWidth = vg.Points(8)
			p.Add(bars, sc)
			p.Legend.Add(fmt.Sprintf("%s (n=%d)", s.name, s.row.N), sc)
		}
		headroom(p, len(ss), logY)
		return p, nil
	}}
}

// ladderPoint is one profile of a ladder for one target.
type ladderPoint struct {
	qps float64
	row compare.Row
}

// ladderChart: p50 and p99 against the offered load, one pair of lines per
// target, with the medians' confidence intervals.
func ladderChart(file, title string, names []string, pts map[string][]ladderPoint) *Chart {
	return &Chart{File: file, Title: title, Kind: "ladder", build: func() (*plot.Plot, error) {
		p := newPlot(title, "offered load (requests/s)", "latency (ms), median across repetitions")
		minQ, maxQ, minY, maxY := math.Inf(1), 0.0, math.Inf(1), 0.0
		for _, n := range names {
			for _, lp := range pts[n] {
				minQ, maxQ = math.Min(minQ, lp.qps), math.Max(maxQ, lp.qps)
				minY = math.Min(minY, math.Max(lp.row.LatencyCIMS["p50"][0], 1e-3))
				maxY = math.Max(maxY, lp.row.LatencyCIMS["p99"][1])
			}
		}
		if maxQ/minQ > 8 {
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = qpsTicks(pts, names)
		}
		logY := maxY/minY > 20
		if logY {
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		} else {
			p.Y.Min = 0
		}
		for i, n := range names {
			for k, m := range []string{"p50", "p99"} {
				var e errPoints
				for _, lp := range pts[n] {
					med, ci := lp.row.LatencyMS[m], lp.row.LatencyCIMS[m]
					if logY {
						med, ci[0] = math.Max(med, 1e-3), math.Max(ci[0], 1e-3)
					}
					e.XYs = append(e.XYs, plotter.XY{X: lp.qps, Y: med})
					e.lo = append(e.lo, math.Max(med-ci[0], 0))
					e.hi = append(e.hi, math.Max(ci[1]-med, 0))
				}
				if len(e.XYs) == 0 {
					continue
				}
				l, sc, err := plotter.NewLinePoints(e.XYs)
				if err != nil {
					return nil, err
				}
				l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
				l.Width = vg.Points(1.6)
				sc.Shape = plotutil.Shape(i)
				if k == 1 {
					l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				}
				bars, err := plotter.NewYErrorBars(e)
				if err != nil {
					return nil, err
				}
				bars.Color = plotutil.Color(i)
				p.Add(l, sc, bars)
				if k == 0 {
					p.Legend.Add(n, l, sc)
				}
			}
		}
		if err := dashedKey(p, "solid: p50, dashed: p99"); err != nil {
			return nil, err
		}
		headroom(p, len(names)+1, logY)
		return p, nil
	}}
}

// qpsTicks marks each offered rate of a ladder on a log axis.
func qpsTicks(pts map[string][]ladderPoint, names []string) plot.Ticker {
	seen := map[float64]bool{}
	var ticks []plot.Tick
	for _, n := range names {
		for _, lp := range pts[n] {
			if !seen[lp.qps] {
				seen[lp.qps] = true
				ticks = append(ticks, plot.Tick{Value: lp.qps, Label: strconv.FormatFloat(lp.qps, 'g', -1, 64)})
			}
		}
	}
	return plot.ConstantTicks(ticks)
}
