package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
)

// Colours of the waterfall's parts: the hops (what a mesh changes) warm,
// the services' own times cool, each in stack order, so that a part keeps
// its colour in every bar.
var (
	hopColors = []color.Color{
		color.RGBA{0xe3, 0x6b, 0x2c, 0xff}, color.RGBA{0xc7, 0x3e, 0x1d, 0xff}, color.RGBA{0xf2, 0xa1, 0x3b, 0xff},
		color.RGBA{0x9e, 0x2a, 0x2b, 0xff}, color.RGBA{0xf5, 0xc2, 0x6b, 0xff},
	}
	serverColors = []color.Color{
		color.RGBA{0x2f, 0x5d, 0x8a, 0xff}, color.RGBA{0x5b, 0x8d, 0xb8, 0xff}, color.RGBA{0x1f, 0x3b, 0x57, 0xff},
		color.RGBA{0x8f, 0xb8, 0xd8, 0xff}, color.RGBA{0x6b, 0x7a, 0x8a, 0xff},
	}
)

// partColors gives each column of w its colour.
func partColors(cols []compare.WaterfallColumn, w compare.Waterfall) map[string]color.Color {
	kind := map[string]string{}
	for _, tg := range w.Targets {
		for _, s := range tg.Splits {
			for _, seg := range s.Segments {
				kind[seg.Key] = seg.Kind
			}
		}
	}
	out := map[string]color.Color{}
	h, sv := 0, 0
	for _, c := range cols {
		if kind[c.Key] == hops.KindHop {
			out[c.Key] = hopColors[h%len(hopColors)]
			h++
		} else {
			out[c.Key] = serverColors[sv%len(serverColors)]
			sv++
		}
	}
	return out
}

// rect is one drawn part: x from x0 to x1 (ms), y from y0 to y1 (rows).
type rect struct {
	x0, x1, y0, y1 float64
	color          color.Color
}

// bars draws rectangles in data coordinates: gonum/plot's bar charts stack
// but do not float, and a parallel branch starts where its sibling does.
type bars []rect

func (b bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range b {
		pts := []vg.Point{{X: trX(r.x0), Y: trY(r.y0)}, {X: trX(r.x1), Y: trY(r.y0)}, {X: trX(r.x1), Y: trY(r.y1)}, {X: trX(r.x0), Y: trY(r.y1)}}
		c.FillPolygon(r.color, c.ClipPolygonXY(pts))
	}
}

func (b bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin, xmax, ymax = 0, math.Inf(1), 0, math.Inf(-1)
	for _, r := range b {
		xmax = math.Max(xmax, r.x1)
		ymin, ymax = math.Min(ymin, r.y0), math.Max(ymax, r.y1)
	}
	return xmin, xmax, ymin, ymax
}

// swatch is a legend entry's colour box.
type swatch struct{ color color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(s.color, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

// waterfallChart: one horizontal bar per (percentile, target), top to
// bottom, the critical path's parts stacked from the client's send, each
// parallel branch in a thin bar under it from where it started.
func waterfallChart(file, title string, w compare.Waterfall) *Chart {
	return &Chart{File: file, Title: title, Kind: "waterfall", build: func() (*plot.Plot, error) {
		p := newPlot(title, "ms from the client's send: mean of the requests at each percentile of end-to-end latency", "")
		p.Legend.Left = false
		cols := w.Columns()
		colors := partColors(cols, w)
		var b bars
		var ticks []plot.Tick
		var totals plotter.XYLabels
		maxX := 0.0
		row := 0
		for i, m := range compare.WaterfallPercentiles {
			for _, tg := range w.Targets {
				if i >= len(tg.Splits) {
					continue
				}
				s := tg.Splits[i]
				y := -float64(row)
				ticks = append(ticks, plot.Tick{Value: y, Label: m + " " + tg.Target})
				for _, seg := range s.Segments {
					// Centred on the row's grid line, which the bar hides.
					r := rect{x0: seg.StartMS, x1: seg.StartMS + math.Max(seg.MS, 0), y0: y - 0.2, y1: y + 0.2, color: colors[seg.Key]}
					if seg.Parallel {
						r.y0, r.y1 = y-0.42, y-0.26
					}
					b = append(b, r)
					maxX = math.Max(maxX, r.x1)
				}
				totals.XYs = append(totals.XYs, plotter.XY{X: s.TotalMS, Y: y - 0.1})
				totals.Labels = append(totals.Labels, " "+compare.FormatMS(s.TotalMS)+" ms")
				row++
			}
			row++ // a gap between percentiles
		}
		p.Add(b)
		labels, err := plotter.NewLabels(totals)
		if err != nil {
			return nil, err
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].Font = font.Font{Typeface: plot.DefaultFont.Typeface, Variant: plot.DefaultFont.Variant, Size: vg.Points(9)}
		}
		p.Add(labels)
		for _, c := range cols {
			p.Legend.Add(c.Label, swatch{colors[c.Key]})
		}
		p.Y.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Min, p.Y.Max = -float64(row-1)-0.2, 0.5
		p.X.Min = 0
		// Room on the right for the legend and the totals.
		p.X.Max = math.Max(maxX, 1e-3) * 1.55
		return p, nil
	}}
}

// waterfallOf returns the waterfall of (scenario, profile), if any.
func waterfallOf(t *compare.Table, sc, prof string) *compare.Waterfall {
	for i := range t.Waterfalls {
		if w := &t.Waterfalls[i]; w.Scenario == sc && w.Profile == prof {
			return w
		}
	}
	return nil
}

// htmlWaterfall is one waterfall's table, the same content as compare's
// markdown.
type htmlWaterfall struct {
	Profile string
	Columns []string
	Rows    []htmlWaterfallRow
}

type htmlWaterfallRow struct {
	Delta      bool
	Percentile string
	Target     string
	Baseline   bool
	Requests   string
	Cells      []htmlCell // total, then each column
}

func waterfallTable(w compare.Waterfall) htmlWaterfall {
	cols := w.Columns()
	hw := htmlWaterfall{Profile: w.Profile}
	for _, c := range cols {
		hw.Columns = append(hw.Columns, c.Label)
	}
	diffCell := func(d *compare.Difference) htmlCell {
		c := htmlCell{Text: compare.DiffCell(*d), Title: fmt.Sprintf("%.2f%% interval of the mean of %d paired differences (SD %s ms)", 100*d.Confidence, d.Pairs, compare.FormatMS(d.SDMS))}
		if v := d.Verdict; v != nil {
			c.Class = "verdict-" + v.Result
			c.Title += fmt.Sprintf("; margin %g ms, p = %.4f, tested at level %.4f among %d part verdicts", v.MarginMS, v.PValue, v.Alpha, v.Family)
		}
		return c
	}
	for i, m := range compare.WaterfallPercentiles {
		for k, tg := range w.Targets {
			s := tg.Splits[i]
			row := htmlWaterfallRow{Target: tg.Target, Baseline: tg.Baseline, Requests: fmt.Sprint(s.Requests)}
			if k == 0 {
				row.Percentile = m
			}
			row.Cells = append(row.Cells, htmlCell{Text: compare.FormatMS(s.TotalMS), Title: fmt.Sprintf("%d requests from %s ms", s.Requests, compare.FormatMS(s.BucketMS))})
			for _, c := range cols {
				cell := htmlCell{}
				if seg, ok := s.Segment(c.Key); ok {
					cell.Text = compare.FormatMS(seg.MS)
				}
				row.Cells = append(row.Cells, cell)
			}
			hw.Rows = append(hw.Rows, row)
			if s.TotalDifference == nil {
				continue
			}
			d := htmlWaterfallRow{Delta: true, Target: tg.Target, Cells: []htmlCell{diffCell(s.TotalDifference)}}
			for _, c := range cols {
				cell := htmlCell{}
				if seg, ok := s.Segment(c.Key); ok && seg.Difference != nil {
					cell = diffCell(seg.Difference)
				}
				d.Cells = append(d.Cells, cell)
			}
			hw.Rows = append(hw.Rows, d)
		}
	}
	return hw
}
