package report

import (
	"fmt"
	"html"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// Inline SVG charts for the HTML report. Coordinates are integer pixels computed with
// integer arithmetic, so the same report renders byte-identically.

// chartW, chartH are a chart's size; the plot area leaves room for axes and a legend.
const (
	chartW      = 960
	chartH      = 320
	plotLeft    = 70
	plotRight   = 180 // legend column
	plotTop     = 30
	plotBottom  = 40
	maxPolyline = 2000 // points per line; longer series are thinned
)

// colour is the i-th series colour (ten, repeating). A constant string rather than a
// slice variable, so no code can change the palette.
func colour(i int) string {
	const palette = "#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf "
	k := i % 10
	return palette[k*8 : k*8+7]
}

// seriesColour is black for the "all" series (drawn over per-queue or per-model lines),
// else the i-th palette colour.
func seriesColour(i int, name string) string {
	if name == "all" {
		return "#000000"
	}
	return colour(i)
}

// xy is one data point in data units.
type xy struct{ X, Y int64 }

// lineSeries is one line of a line chart; Step draws it as a step function (the value
// holds until the next point).
type lineSeries struct {
	Name   string
	Points []xy
	Step   bool
}

// axis formats tick labels.
type axis struct {
	Label  string
	Format func(int64) string
}

// frame maps data coordinates into the plot area.
type frame struct{ x0, x1, y0, y1 int64 }

func (f frame) px(x int64) int64 {
	w := int64(chartW - plotLeft - plotRight)
	if f.x1 == f.x0 {
		return plotLeft
	}
	return plotLeft + (x-f.x0)*w/(f.x1-f.x0)
}

func (f frame) py(y int64) int64 {
	h := int64(chartH - plotTop - plotBottom)
	if f.y1 == f.y0 {
		return chartH - plotBottom
	}
	return chartH - plotBottom - (y-f.y0)*h/(f.y1-f.y0)
}

// svgOpen starts a chart with its title and id (tests and readers find charts by id).
func svgOpen(b *strings.Builder, id, title string) {
	fmt.Fprintf(b, `<figure id="%s"><figcaption>%s</figcaption>`+"\n", html.EscapeString(id), html.EscapeString(title))
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`+"\n", chartW, chartH, chartW, chartH)
}

func svgClose(b *strings.Builder) { b.WriteString("</svg></figure>\n") }

// drawAxes draws the plot box with five ticks on each axis.
func drawAxes(b *strings.Builder, f frame, xa, ya axis) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n",
		plotLeft, plotTop, chartW-plotLeft-plotRight, chartH-plotTop-plotBottom)
	for i := int64(0); i <= 4; i++ {
		xv := f.x0 + (f.x1-f.x0)*i/4
		yv := f.y0 + (f.y1-f.y0)*i/4
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`+"\n", f.px(xv), chartH-plotBottom+15, html.EscapeString(xa.Format(xv)))
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`+"\n", plotLeft-5, f.py(yv)+4, html.EscapeString(ya.Format(yv)))
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eee"/>`+"\n", plotLeft, f.py(yv), chartW-plotRight, f.py(yv))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>`+"\n", (chartW-plotRight+plotLeft)/2, chartH-5, html.EscapeString(xa.Label))
	fmt.Fprintf(b, `<text x="12" y="%d" font-size="12" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>`+"\n", chartH/2, chartH/2, html.EscapeString(ya.Label))
}

// legend lists series names in the right column.
func legend(b *strings.Builder, names []string) {
	for i, n := range names {
		y := plotTop + 10 + i*16
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="11">%s</text>`+"\n",
			chartW-plotRight+10, y-9, seriesColour(i, n), chartW-plotRight+25, y, html.EscapeString(n))
	}
}

// lineChart draws series over a shared frame. yMax fixes the top of the y axis (0 = the
// data's maximum).
func lineChart(b *strings.Builder, id, title string, series []lineSeries, xa, ya axis, yMax int64) {
	svgOpen(b, id, title)
	f := frame{x0: 0, x1: 1, y0: 0, y1: max(yMax, 1)}
	first := true
	for _, s := range series {
		for _, p := range s.Points {
			if first {
				f.x0, f.x1, first = p.X, p.X+1, false
			}
			f.x0, f.x1 = min(f.x0, p.X), max(f.x1, p.X)
			if yMax == 0 {
				f.y1 = max(f.y1, p.Y)
			}
		}
	}
	drawAxes(b, f, xa, ya)
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.Name
		pts := thin(s.Points)
		fmt.Fprintf(b, `<polyline data-series="%s" fill="none" stroke="%s" stroke-width="1.5" points="`, html.EscapeString(s.Name), seriesColour(i, s.Name))
		for j, p := range pts {
			if s.Step && j > 0 {
				fmt.Fprintf(b, "%d,%d ", f.px(p.X), f.py(pts[j-1].Y))
			}
			fmt.Fprintf(b, "%d,%d ", f.px(p.X), f.py(p.Y))
		}
		b.WriteString("\"/>\n")
	}
	legend(b, names)
	svgClose(b)
}

// thin keeps at most maxPolyline points, evenly spaced, always keeping the last.
func thin(pts []xy) []xy {
	if len(pts) <= maxPolyline {
		return pts
	}
	out := make([]xy, 0, maxPolyline+1)
	for i := 0; i < maxPolyline; i++ {
		out = append(out, pts[i*len(pts)/maxPolyline])
	}
	return append(out, pts[len(pts)-1])
}

// barGroup is one category of a grouped bar chart.
type barGroup struct {
	Label  string
	Values []int64 // one per bar name
}

// barChart draws grouped bars; names label the bars of each group.
func barChart(b *strings.Builder, id, title string, names []string, groups []barGroup, ya axis) {
	svgOpen(b, id, title)
	f := frame{x0: 0, x1: int64(max(len(groups), 1)), y0: 0, y1: 1}
	for _, g := range groups {
		for _, v := range g.Values {
			f.y1 = max(f.y1, v)
		}
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", plotLeft, plotTop, chartW-plotLeft-plotRight, chartH-plotTop-plotBottom)
	for i := int64(0); i <= 4; i++ {
		yv := f.y1 * i / 4
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`+"\n", plotLeft-5, f.py(yv)+4, html.EscapeString(ya.Format(yv)))
	}
	slot := (f.px(1) - f.px(0))
	barW := max(slot*8/10/int64(max(len(names), 1)), 1)
	for gi, g := range groups {
		x := f.px(int64(gi)) + slot/10
		for bi, v := range g.Values {
			fmt.Fprintf(b, `<rect data-group="%s" data-bar="%s" data-value="%d" x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n",
				html.EscapeString(g.Label), html.EscapeString(names[bi]), v, x+int64(bi)*barW, f.py(v), barW, f.py(0)-f.py(v), colour(bi))
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`+"\n", f.px(int64(gi))+slot/2, chartH-plotBottom+15, html.EscapeString(g.Label))
	}
	fmt.Fprintf(b, `<text x="12" y="%d" font-size="12" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>`+"\n", chartH/2, chartH/2, html.EscapeString(ya.Label))
	legend(b, names)
	svgClose(b)
}

// heatmapChart draws one node × GPU heat map: a column per node, a row per GPU index,
// shaded by allocation (white free, dark blue full, grey for a node that is down).
func heatmapChart(b *strings.Builder, id string, h Heatmap) {
	svgOpen(b, id, "Node × GPU allocation at "+sim.FormatDuration(h.T))
	rows := 1
	for _, r := range h.Rows {
		rows = max(rows, len(r.GPUs))
	}
	plotW := int64(chartW - plotLeft - plotRight)
	plotH := int64(chartH - plotTop - plotBottom)
	n := int64(max(len(h.Rows), 1))
	for i, r := range h.Rows {
		x0 := plotLeft + int64(i)*plotW/n
		x1 := plotLeft + int64(i+1)*plotW/n
		for g, a := range r.GPUs {
			y0 := plotTop + int64(g)*plotH/int64(rows)
			y1 := plotTop + int64(g+1)*plotH/int64(rows)
			fmt.Fprintf(b, `<rect data-node="%s" data-gpu="%d" data-milli="%d" x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n",
				html.EscapeString(r.Node), g, a, x0, y0, max(x1-x0, 1), max(y1-y0, 1), heatColour(a, r.Down))
		}
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", plotLeft, plotTop, plotW, plotH)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" text-anchor="middle">%d nodes (columns) × GPU index (rows); darker = more allocated</text>`+"\n",
		(chartW-plotRight+plotLeft)/2, chartH-10, len(h.Rows))
	svgClose(b)
}

// heatColour shades white (free) to dark blue (fully allocated), integer RGB.
func heatColour(a resources.MilliGPU, down bool) string {
	if down {
		return "#bbbbbb"
	}
	v := min(max(int64(a), 0), 1000)
	r := 255 - v*224/1000
	g := 255 - v*176/1000
	bl := 255 - v*75/1000
	return fmt.Sprintf("#%02x%02x%02x", r, g, bl)
}
