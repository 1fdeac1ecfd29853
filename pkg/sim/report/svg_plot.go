package report

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// Plot is a line chart written as a standalone SVG document (docs/benchmarks.md's
// figures), drawn with the report's chart code: integer data units, integer pixels, so
// the same data gives the same bytes.
type Plot struct {
	Title  string
	X, Y   PlotAxis
	Series []PlotSeries
	// XMax and YMax fix the axes' ends (0: the data's maximum); XMin and YMin their
	// starts (0 by default): points left of XMin are not drawn, and values below YMin
	// are drawn at YMin, so a plot can show the part of the curves that differs.
	XMin, XMax, YMin, YMax int64
}

// PlotAxis names an axis and formats its ticks.
type PlotAxis struct {
	Label  string
	Format func(int64) string
}

// PlotSeries is one line; Step draws it as a step function (a CDF).
type PlotSeries struct {
	Name   string
	Points []PlotPoint
	Step   bool
}

// PlotPoint is one point in data units.
type PlotPoint struct{ X, Y int64 }

// WriteSVG writes p as an SVG document with a white background and its title on top.
func (p Plot) WriteSVG(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, chartH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>`+"\n", plotLeft, plotTop-10, html.EscapeString(p.Title))
	series := make([]lineSeries, len(p.Series))
	for i, s := range p.Series {
		series[i] = lineSeries{Name: s.Name, Step: s.Step}
		for _, pt := range s.Points {
			if pt.X >= p.XMin {
				series[i].Points = append(series[i].Points, xy{X: pt.X, Y: max(pt.Y, p.YMin)})
			}
		}
	}
	var xr span
	if p.XMax > 0 || p.XMin > 0 {
		xr = span{from: p.XMin, to: p.XMax}
	}
	drawLines(&b, series, axis{Label: p.X.Label, Format: p.X.Format}, axis{Label: p.Y.Label, Format: p.Y.Format}, xr, p.YMin, p.YMax)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
