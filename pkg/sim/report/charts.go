package report

import (
	"io"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/sim"
)

// WriteCharts writes the report's charts, under their section headings, as HTML without
// the page around them: the figures WriteHTML shows after its summary tables, for a page
// that brings its own shell (the dashboard shows the same charts). Every figure is inline
// SVG with its caption and one-line explanation; nothing refers to a script or a file.
func WriteCharts(w io.Writer, r Report) error {
	var b strings.Builder
	writeCharts(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCharts is WriteCharts into a builder.
func writeCharts(b *strings.Builder, r Report) {
	b.WriteString("<h2>Cluster</h2>\n")
	allocationChart(b, r)
	capacityChart(b, r)
	b.WriteString("<h2>Queues</h2>\n")
	waitCDFChart(b, r)
	quotaChart(b, r)
	borrowingChart(b, r)
	b.WriteString("<h2>Placement</h2>\n")
	heatmaps(b, r.Heatmaps)
	preemptionChart(b, r)
}

// ValueUnit is the unit of a TimeChart's values, which picks its y axis' label and tick
// format.
type ValueUnit int

const (
	// UnitPermille values are thousandths of a capacity, drawn as percentages from 0 to 100%.
	UnitPermille ValueUnit = iota
	// UnitMilliGPU values are milli-GPU, drawn as GPUs.
	UnitMilliGPU
	// UnitCount values are plain counts (workloads, events).
	UnitCount
	// UnitDuration values are nanoseconds, drawn as durations.
	UnitDuration
)

// TimePoint is one sample of a TimeSeries: the value holds until the next point.
type TimePoint struct {
	T sim.Seconds
	V int64
}

// TimeSeries is one line of a TimeChart.
type TimeSeries struct {
	Name   string
	Points []TimePoint
}

// TimeChart is a step-line chart over time drawn with the report's chart code, for
// series that do not come from a simulation's Report (the dashboard's history of a live
// cluster). Start and End fix the x axis (End 0: from the data); XLabel and YLabel name
// the axes ("" keeps the unit's own label).
type TimeChart struct {
	ID, Title, Note string
	XLabel, YLabel  string
	Unit            ValueUnit
	Series          []TimeSeries
	Start, End      sim.Seconds
}

// WriteTimeChart writes one TimeChart as a figure with its caption and explanation.
func WriteTimeChart(w io.Writer, c TimeChart) error {
	var series []lineSeries
	for _, s := range c.Series {
		ls := lineSeries{Name: s.Name, Step: true}
		for _, p := range s.Points {
			ls.Points = append(ls.Points, xy{X: int64(p.T), Y: p.V})
		}
		if c.End > 0 {
			ls = withEnd(ls, c.End)
		}
		series = append(series, ls)
	}
	xa := axis{Label: c.XLabel, Format: timeAxis().Format}
	if xa.Label == "" {
		xa.Label = timeAxis().Label
	}
	var xr span
	if c.End > 0 {
		xr = span{from: int64(c.Start), to: int64(c.End)}
	}
	ya, yMax := unitAxis(c.Unit)
	if c.YLabel != "" {
		ya.Label = c.YLabel
	}
	if c.Unit == UnitCount {
		yMax = countTop(c.Series)
	}
	var b strings.Builder
	lineChart(&b, c.ID, c.Title, c.Note, series, xa, ya, xr, yMax)
	_, err := io.WriteString(w, b.String())
	return err
}

// unitAxis is the y axis of a unit and its fixed top (0: the data's maximum).
func unitAxis(u ValueUnit) (axis, int64) {
	switch u {
	case UnitPermille:
		return pctAxis(), 1000
	case UnitMilliGPU:
		return gpuAxis(), 0
	case UnitDuration:
		return axis{Label: "wait", Format: func(v int64) string { return sim.FormatDuration(sim.Seconds(v)) }}, 0
	default:
		return axis{Label: "count", Format: func(v int64) string { return strconv.FormatInt(v, 10) }}, 0
	}
}

// countTop is the top of a count axis: the largest value rounded up to a multiple of
// four, so the five ticks (every quarter) are whole numbers and none repeats.
func countTop(series []TimeSeries) int64 {
	var top int64
	for _, s := range series {
		for _, p := range s.Points {
			top = max(top, p.V)
		}
	}
	return max((top+3)/4*4, 4)
}
