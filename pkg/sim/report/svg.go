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

// span is a fixed x range; the zero span means "from the data".
type span struct{ from, to int64 }

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

// svgOpen starts a chart of the standard size with its title and id (tests and readers
// find charts by id).
func svgOpen(b *strings.Builder, id, title string) { svgOpenSized(b, id, title, chartW, chartH) }

// svgOpenSized starts a chart of any height. The SVG scales down to the page's width
// (max-width, viewBox) so a narrow window shrinks it instead of cutting it.
func svgOpenSized(b *strings.Builder, id, title string, w, h int64) {
	fmt.Fprintf(b, `<figure id="%s"><figcaption>%s</figcaption>`+"\n", html.EscapeString(id), html.EscapeString(title))
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" style="max-width:100%%;height:auto" role="img">`+"\n", w, h, w, h)
}

// svgClose ends a chart with its one-line explanation; every chart has one because a
// reader who meets "free pieces" or "stranded" must not need the docs to read the panel.
func svgClose(b *strings.Builder, note string) {
	fmt.Fprintf(b, "</svg><p class=\"note\">%s</p></figure>\n", html.EscapeString(note))
}

// drawAxes draws the plot box with five ticks on each axis, the last x tick at f.x1. Each
// x tick carries its value (data-x-tick) so a reader of the markup sees the axis' extent.
func drawAxes(b *strings.Builder, f frame, xa, ya axis) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n",
		plotLeft, plotTop, chartW-plotLeft-plotRight, chartH-plotTop-plotBottom)
	for i := int64(0); i <= 4; i++ {
		xv := f.x0 + (f.x1-f.x0)*i/4
		yv := f.y0 + (f.y1-f.y0)*i/4
		fmt.Fprintf(b, `<text data-x-tick="%d" x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`+"\n", xv, f.px(xv), chartH-plotBottom+15, html.EscapeString(xa.Format(xv)))
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`+"\n", plotLeft-5, f.py(yv)+4, html.EscapeString(ya.Format(yv)))
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eee"/>`+"\n", plotLeft, f.py(yv), chartW-plotRight, f.py(yv))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>`+"\n", (chartW-plotRight+plotLeft)/2, chartH-5, html.EscapeString(xa.Label))
	yLabel(b, ya)
}

// yLabel writes the y axis' label, turned along the axis.
func yLabel(b *strings.Builder, ya axis) {
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

// lineChart draws series over a shared frame. xr fixes the x range (a time chart covers
// the whole run even where no series has a point); the zero span takes it from the data.
// yMax fixes the top of the y axis (0 = the data's maximum).
func lineChart(b *strings.Builder, id, title, note string, series []lineSeries, xa, ya axis, xr span, yMax int64) {
	svgOpen(b, id, title)
	drawLines(b, series, xa, ya, xr, 0, yMax)
	svgClose(b, note)
}

// drawLines draws the axes, the series and their legend; the y axis starts at yMin.
func drawLines(b *strings.Builder, series []lineSeries, xa, ya axis, xr span, yMin, yMax int64) {
	f := lineFrame(series, xr, yMax)
	f.y0 = min(yMin, f.y1-1)
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
}

// lineFrame is the frame holding every point, widened to xr when one is set.
func lineFrame(series []lineSeries, xr span, yMax int64) frame {
	f := frame{x0: 0, x1: 1, y0: 0, y1: max(yMax, 1)}
	first := true
	if xr != (span{}) {
		f.x0, f.x1, first = xr.from, max(xr.to, xr.from+1), false
	}
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
	return f
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
func barChart(b *strings.Builder, id, title, note string, names []string, groups []barGroup, ya axis) {
	svgOpen(b, id, title)
	f := frame{x0: 0, x1: int64(max(len(groups), 1)), y0: 0, y1: 1}
	for _, g := range groups {
		for _, v := range g.Values {
			f.y1 = max(f.y1, v)
		}
	}
	yTicks(b, f, ya)
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
	yLabel(b, ya)
	legend(b, names)
	svgClose(b, note)
}

// yTicks draws the plot box and five y ticks (bar charts label their own x axis).
func yTicks(b *strings.Builder, f frame, ya axis) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", plotLeft, plotTop, chartW-plotLeft-plotRight, chartH-plotTop-plotBottom)
	for i := int64(0); i <= 4; i++ {
		yv := f.y1 * i / 4
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`+"\n", plotLeft-5, f.py(yv)+4, html.EscapeString(ya.Format(yv)))
	}
}

// timeHistogram draws counts per equal time bin of [xr.from, xr.to] as stacked bars, one
// colour per name, over a time axis that spans the whole range (its last tick is xr.to,
// so a quiet end of the run shows as empty bins, not as a shorter axis).
// counts[k][i] is name k's count in bin i.
func timeHistogram(b *strings.Builder, id, title, note string, names []string, counts [][]int64, xr span, xa, ya axis) {
	svgOpen(b, id, title)
	bins := 0
	if len(counts) > 0 {
		bins = len(counts[0])
	}
	totals := make([]int64, bins)
	for _, c := range counts {
		for i, v := range c {
			totals[i] += v
		}
	}
	f := frame{x0: xr.from, x1: max(xr.to, xr.from+1), y0: 0, y1: 1}
	for _, t := range totals {
		f.y1 = max(f.y1, t)
	}
	drawAxes(b, f, xa, ya)
	for i := 0; i < bins; i++ {
		lo := f.x0 + (f.x1-f.x0)*int64(i)/int64(bins)
		hi := f.x0 + (f.x1-f.x0)*int64(i+1)/int64(bins)
		x, w := f.px(lo), max(f.px(hi)-f.px(lo)-1, 1)
		var below int64
		for k, c := range counts {
			if c[i] == 0 {
				continue
			}
			fmt.Fprintf(b, `<rect data-bar="%s" data-from="%d" data-to="%d" data-value="%d" x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n",
				html.EscapeString(names[k]), lo, hi, c[i], x, f.py(below+c[i]), w, f.py(below)-f.py(below+c[i]), colour(k))
			below += c[i]
		}
	}
	legend(b, names)
	svgClose(b, note)
}

// Heat map layout: a row per node (labelled with its name) and a column per GPU index.
const (
	heatRowH      = 14   // row height while every row can carry a readable label
	heatMinRowH   = 2    // row height floor for very large clusters
	heatMaxPlotH  = 1400 // rows shrink to keep a large cluster's map about this tall
	heatLabelRune = 7    // pixels per character of a row label (font-size 11)
	heatMaxLabel  = 28   // characters of a row label; longer names are cut, the full name is in the row's tooltip
	heatScaleStep = 10   // colour scale steps
)

// heatLayout is one heat map's geometry.
type heatLayout struct {
	left, rowH, cols, plotW, height int64
	labelEvery                      int // every n-th row's name is written (all rows have a tooltip)
}

func layoutHeatmap(h Heatmap) heatLayout {
	n := int64(max(len(h.Rows), 1))
	l := heatLayout{cols: 1, rowH: heatRowH}
	longest := 1
	for _, r := range h.Rows {
		l.cols = max(l.cols, int64(len(r.GPUs)))
		longest = max(longest, min(len([]rune(r.Node)), heatMaxLabel))
	}
	if n*heatRowH > heatMaxPlotH {
		l.rowH = max(heatMaxPlotH/n, heatMinRowH)
	}
	// Rows too thin for a label show every n-th name, so labels never overlap.
	l.labelEvery = int((heatRowH + l.rowH - 1) / l.rowH)
	l.left = int64(longest*heatLabelRune) + 10
	l.plotW = chartW - l.left - plotRight
	l.height = plotTop + n*l.rowH + plotBottom
	return l
}

// heatmapChart draws one node × GPU heat map: a row per node, labelled with its name, a
// column per GPU index, shaded by allocation (white free, dark blue full, grey for a node
// that is down), with the colour scale in the legend column.
func heatmapChart(b *strings.Builder, id, title, note string, h Heatmap) {
	l := layoutHeatmap(h)
	svgOpenSized(b, id, title, chartW, max(l.height, chartH))
	for g := int64(0); g < l.cols; g++ {
		if l.cols <= 16 || g%4 == 0 {
			fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="middle">GPU %d</text>`+"\n", l.left+(2*g+1)*l.plotW/(2*l.cols), plotTop-6, g)
		}
	}
	for i, r := range h.Rows {
		heatRow(b, l, i, r)
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", l.left, plotTop, l.plotW, int64(max(len(h.Rows), 1))*l.rowH)
	heatScale(b)
	svgClose(b, note)
}

// heatRow draws one node's row: its label (when rows are tall enough, or every
// labelEvery-th) and a cell per GPU, grouped under the node's name as a tooltip.
func heatRow(b *strings.Builder, l heatLayout, i int, r HeatmapRow) {
	y := plotTop + int64(i)*l.rowH
	fmt.Fprintf(b, `<g data-row="%s"><title>%s</title>`+"\n", html.EscapeString(r.Node), html.EscapeString(r.Node))
	if i%l.labelEvery == 0 {
		fmt.Fprintf(b, `<text data-label="%s" x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`+"\n",
			html.EscapeString(r.Node), l.left-5, y+min(l.rowH, heatRowH)-3, html.EscapeString(cutLabel(r.Node)))
	}
	for g, a := range r.GPUs {
		x0 := l.left + int64(g)*l.plotW/l.cols
		x1 := l.left + int64(g+1)*l.plotW/l.cols
		fmt.Fprintf(b, `<rect data-node="%s" data-gpu="%d" data-milli="%d" x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#ddd" stroke-width="0.5"/>`+"\n",
			html.EscapeString(r.Node), g, a, x0, y, max(x1-x0, 1), l.rowH, heatColour(a, r.Down))
	}
	b.WriteString("</g>\n")
}

// cutLabel shortens a node name to heatMaxLabel characters.
func cutLabel(name string) string {
	r := []rune(name)
	if len(r) <= heatMaxLabel {
		return name
	}
	return string(r[:heatMaxLabel-1]) + "…"
}

// heatScale draws the colour scale in the legend column: the shades from 0 (free) to 1
// GPU (fully allocated), their end values written out, and the grey of a node that is down.
func heatScale(b *strings.Builder) {
	x := int64(chartW - plotRight + 10)
	fmt.Fprintf(b, `<g class="scale" data-min="0" data-max="%d"><text x="%d" y="%d" font-size="11">allocated per GPU</text>`+"\n", resources.MilliPerGPU, x, plotTop)
	for s := int64(0); s <= heatScaleStep; s++ {
		v := s * int64(resources.MilliPerGPU) / heatScaleStep
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s" stroke="#ddd"/>`+"\n", x+s*12, plotTop+8, heatColour(resources.MilliGPU(v), false))
	}
	fmt.Fprintf(b, `<text data-scale="min" x="%d" y="%d" font-size="11">0 (free)</text>`+"\n", x, plotTop+34)
	fmt.Fprintf(b, `<text data-scale="max" x="%d" y="%d" font-size="11" text-anchor="end">1 GPU (full)</text>`+"\n", x+heatScaleStep*12+12, plotTop+34)
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" font-size="11">node down</text></g>`+"\n",
		x, plotTop+44, heatColour(0, true), x+18, plotTop+54)
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

// heatTotal is a heat map's allocated milli-GPU over every GPU.
func heatTotal(h Heatmap) int64 {
	var t int64
	for _, r := range h.Rows {
		for _, a := range r.GPUs {
			t += int64(a)
		}
	}
	return t
}

// heatGPUs is a heat map's number of GPUs.
func heatGPUs(h Heatmap) int {
	n := 0
	for _, r := range h.Rows {
		n += len(r.GPUs)
	}
	return n
}

// heatTitle names a heat map's moment.
func heatTitle(h Heatmap, busiest bool) string {
	if busiest {
		return "Node × GPU allocation at the busiest moment, " + sim.FormatDuration(h.T)
	}
	return "Node × GPU allocation at " + sim.FormatDuration(h.T)
}
