package report

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// WriteHTML writes the report as one self-contained HTML page: inline SVG charts (GPU
// allocation over time, free/stranded/fragmented capacity, queue wait CDF per queue, quota
// use vs nominal, borrowing, node × GPU heat maps, preemptions over time), the text
// tables, and the report's JSON in a data block. No scripts, styles from the network or
// external files.
func WriteHTML(w io.Writer, r Report, title string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n", html.EscapeString(title))
	b.WriteString("<style>body{font-family:sans-serif;margin:2em;max-width:1000px}figure{margin:1.5em 0}figcaption{font-weight:bold}pre{background:#f6f6f6;padding:1em;overflow-x:auto}</style>\n</head><body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(title))
	var table strings.Builder
	if err := r.WriteText(&table); err != nil {
		return err
	}
	fmt.Fprintf(&b, "<h2>Summary</h2>\n<pre>%s</pre>\n", html.EscapeString(table.String()))
	b.WriteString("<h2>Cluster</h2>\n")
	allocationChart(&b, r)
	capacityChart(&b, r)
	b.WriteString("<h2>Queues</h2>\n")
	waitCDFChart(&b, r)
	quotaChart(&b, r)
	borrowingChart(&b, r)
	b.WriteString("<h2>Placement</h2>\n")
	for i, h := range r.Heatmaps {
		heatmapChart(&b, fmt.Sprintf("heatmap-%d", i), h)
	}
	preemptionChart(&b, r)
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// JSON in a data block (not executed). "</" is escaped so the data cannot end the element.
	fmt.Fprintf(&b, "<script type=\"application/json\" id=\"kpi-data\">%s</script>\n</body></html>\n", strings.ReplaceAll(string(data), "</", `<\/`))
	_, err = io.WriteString(w, b.String())
	return err
}

// The axes of the report's charts (functions, so no chart can change another's axis).
func timeAxis() axis {
	return axis{Label: "simulated time", Format: func(v int64) string { return sim.FormatDuration(sim.Seconds(v)) }}
}

func pctAxis() axis {
	return axis{Label: "% of capacity", Format: func(v int64) string { return FormatPermille(v) }}
}

func gpuAxis() axis {
	return axis{Label: "GPUs", Format: func(v int64) string {
		return strings.TrimSuffix(FormatMilli(resources.MilliGPU(v)), ".000")
	}}
}

// allocationChart: allocated / capacity over time, one line per series.
func allocationChart(b *strings.Builder, r Report) {
	var series []lineSeries
	for _, a := range r.Allocation {
		s := lineSeries{Name: a.Key, Step: true}
		for _, p := range a.Points {
			s.Points = append(s.Points, xy{X: int64(p.T), Y: Permille(int64(p.Allocated), int64(p.Capacity))})
		}
		series = append(series, withEnd(s, r.End))
	}
	lineChart(b, "chart-allocation", "GPU allocation over time (allocated / capacity, by model and mode)", series, timeAxis(), pctAxis(), 1000)
}

// capacityChart: free, stranded and fragmented GPU capacity over time.
func capacityChart(b *strings.Builder, r Report) {
	free := lineSeries{Name: "free", Step: true}
	pieces := lineSeries{Name: "free pieces", Step: true}
	stranded := lineSeries{Name: "stranded", Step: true}
	frag := lineSeries{Name: "FGD fragment", Step: true}
	for _, p := range r.Capacity {
		free.Points = append(free.Points, xy{int64(p.T), int64(p.Free)})
		pieces.Points = append(pieces.Points, xy{int64(p.T), int64(p.FreePieces)})
		stranded.Points = append(stranded.Points, xy{int64(p.T), int64(p.Stranded)})
		frag.Points = append(frag.Points, xy{int64(p.T), int64(p.Frag)})
	}
	series := []lineSeries{withEnd(free, r.End), withEnd(pieces, r.End), withEnd(stranded, r.End), withEnd(frag, r.End)}
	lineChart(b, "chart-capacity", "Free, stranded and fragmented GPU capacity", series, timeAxis(), gpuAxis(), 0)
}

// waitCDFChart: per queue, the share of placed workloads that waited at most x.
func waitCDFChart(b *strings.Builder, r Report) {
	var series []lineSeries
	for _, q := range append(append([]QueueKPIs{}, r.Queues...), r.Overall) {
		s := lineSeries{Name: q.Name, Step: true}
		n := int64(len(q.Wait.Values))
		for i, v := range q.Wait.Values {
			s.Points = append(s.Points, xy{X: int64(v), Y: int64(i+1) * 1000 / n})
		}
		series = append(series, s)
	}
	waitAxis := axis{Label: "queue wait", Format: timeAxis().Format}
	cdfAxis := axis{Label: "share of placed workloads", Format: pctAxis().Format}
	lineChart(b, "chart-wait-cdf", "Queue wait CDF per ClusterQueue", series, waitAxis, cdfAxis, 1000)
}

// quotaChart: nominal, mean used and peak used GPUs per ClusterQueue.
func quotaChart(b *strings.Builder, r Report) {
	var groups []barGroup
	for _, q := range r.QuotaUse {
		groups = append(groups, barGroup{Label: q.ClusterQueue, Values: []int64{int64(q.Nominal), int64(q.MeanUsed), int64(q.PeakUsed)}})
	}
	barChart(b, "chart-quota", "Quota use vs nominal per ClusterQueue", []string{"nominal", "mean used", "peak used"}, groups, gpuAxis())
}

// borrowingChart: borrowed GPUs over time per ClusterQueue.
func borrowingChart(b *strings.Builder, r Report) {
	var series []lineSeries
	for _, q := range r.QuotaUse {
		s := lineSeries{Name: q.ClusterQueue, Step: true}
		for _, p := range q.Points {
			s.Points = append(s.Points, xy{int64(p.T), int64(p.Borrowed)})
		}
		series = append(series, withEnd(s, r.End))
	}
	lineChart(b, "chart-borrowing", "Borrowed GPUs over time per ClusterQueue", series, timeAxis(), gpuAxis(), 0)
}

// preemptionBins is the number of time bins of the preemption chart.
const preemptionBins = 40

// preemptionChart: preemptions, interruptions and evictions per time bin.
func preemptionChart(b *strings.Builder, r Report) {
	span := max(int64(r.End-r.Start), 1)
	counts := map[sim.EventKind][]int64{}
	kinds := []sim.EventKind{sim.EvPreempted, sim.EvInterrupted, sim.EvEvicted}
	for _, k := range kinds {
		counts[k] = make([]int64, preemptionBins)
	}
	for _, p := range r.Preemptions {
		bin := min(max(int64(p.T-r.Start)*preemptionBins/span, 0), preemptionBins-1)
		counts[p.Event][bin]++
	}
	var groups []barGroup
	for i := int64(0); i < preemptionBins; i++ {
		label := ""
		if i%8 == 0 {
			label = sim.FormatDuration(r.Start + sim.Seconds(span*i/preemptionBins))
		}
		groups = append(groups, barGroup{Label: label, Values: []int64{counts[sim.EvPreempted][i], counts[sim.EvInterrupted][i], counts[sim.EvEvicted][i]}})
	}
	title := fmt.Sprintf("Preemptions over time (%d events, %s GPU-hours lost)", len(r.Preemptions), FormatGPUHours(r.LostGPUMilliSeconds))
	barChart(b, "chart-preemptions", title, []string{"preempted", "interrupted", "evicted"}, groups, axis{Label: "events", Format: func(v int64) string { return fmt.Sprint(v) }})
}

// withEnd extends a step series to the end of the run so its last value is drawn.
func withEnd(s lineSeries, end sim.Seconds) lineSeries {
	if n := len(s.Points); n > 0 && s.Points[n-1].X < int64(end) {
		s.Points = append(s.Points, xy{X: int64(end), Y: s.Points[n-1].Y})
	}
	return s
}
