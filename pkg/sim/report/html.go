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

// pageStyle is the report's only style sheet. No rule fixes a width or hides overflow:
// tables sit in scrolling boxes and their cells wrap, charts shrink to the page, so
// nothing is cut at the right edge of a narrow window.
const pageStyle = `body{font-family:sans-serif;margin:2em;max-width:1000px}` +
	`figure{margin:1.5em 0}figcaption{font-weight:bold}p.note{margin:.3em 0;color:#444;font-size:90%}` +
	`table{border-collapse:collapse;font-size:90%}th,td{padding:.2em .5em;border-bottom:1px solid #ddd;text-align:right}` +
	`th:first-child,td:first-child{text-align:left}pre{background:#f6f6f6;padding:1em;white-space:pre-wrap}`

// scrollBox is the container of every table: a table wider than the window scrolls
// inside it instead of running off the page.
const scrollBox = `<div class="table-scroll" style="overflow-x:auto;max-width:100%">`

// WriteHTML writes the report as one self-contained HTML page: the summary tables, inline
// SVG charts (GPU allocation over time, free/stranded/fragmented capacity, queue wait CDF
// per queue, quota use vs nominal, borrowing, node × GPU heat maps, preemptions over
// time), each with a one-line explanation, and the report's JSON in a data block. No
// scripts, styles from the network or external files.
func WriteHTML(w io.Writer, r Report, title string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>%s</title>\n", html.EscapeString(title))
	fmt.Fprintf(&b, "<style>%s</style>\n</head><body>\n", pageStyle)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(title))
	b.WriteString("<h2>Summary</h2>\n")
	summaryTables(&b, r)
	writeCharts(&b, r)
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// JSON in a data block (not executed). "</" is escaped so the data cannot end the element.
	fmt.Fprintf(&b, "<script type=\"application/json\" id=\"kpi-data\">%s</script>\n</body></html>\n", strings.ReplaceAll(string(data), "</", `<\/`))
	_, err = io.WriteString(w, b.String())
	return err
}

// summaryTables writes the text report's tables as HTML tables (the same columns as
// WriteText), whose cells wrap, each in a scrolling box, and its cluster lines as text.
func summaryTables(b *strings.Builder, r Report) {
	header := []string{"QUEUE", "SUBMITTED", "PLACED", "FINISHED", "PENDING", "WAIT P50", "WAIT P95", "WAIT P99",
		"JCT MEAN", "JCT P95", "PREEMPTED", "SPOT INTERRUPTED", "EVICTED", "LOST GPU-H"}
	var rows [][]string
	for _, q := range append(append([]QueueKPIs{}, r.Queues...), r.Overall) {
		rows = append(rows, []string{q.Name, fmt.Sprint(q.Submitted), fmt.Sprint(q.Placed), fmt.Sprint(q.Finished), fmt.Sprint(q.StillPending),
			sim.FormatDuration(q.Wait.P50), sim.FormatDuration(q.Wait.P95), sim.FormatDuration(q.Wait.P99),
			sim.FormatDuration(q.JCT.Mean), sim.FormatDuration(q.JCT.P95),
			fmt.Sprint(q.Preempted), fmt.Sprint(q.Interrupted), fmt.Sprint(q.Evicted), FormatGPUHours(q.LostGPUMilliSeconds)})
	}
	htmlTable(b, "summary-queues", header, rows)
	var lines strings.Builder
	r.writeClusterLines(&lines)
	fmt.Fprintf(b, "<pre id=\"summary-cluster\">%s</pre>\n", html.EscapeString(strings.TrimPrefix(lines.String(), "\n")))
	if len(r.QuotaUse) == 0 {
		return
	}
	rows = nil
	for _, q := range r.QuotaUse {
		rows = append(rows, []string{q.ClusterQueue, FormatMilli(q.Nominal), FormatMilli(q.MeanUsed), FormatMilli(q.PeakUsed),
			FormatPermille(q.UtilisationPermille), FormatMilli(q.MeanBorrowed), FormatMilli(q.PeakBorrowed)})
	}
	htmlTable(b, "summary-quota", []string{"CLUSTERQUEUE", "NOMINAL GPU-EQ", "MEAN USED", "PEAK USED", "UTILISATION", "MEAN BORROWED", "PEAK BORROWED"}, rows)
	b.WriteString("<p class=\"note\">GPU-EQ: GPU-equivalents, whole GPUs plus MIG instances at their share of a GPU (1g of 7 slices = 0.142); shared replicas not counted.</p>\n")
}

// htmlTable writes one table in a scrolling box.
func htmlTable(b *strings.Builder, id string, header []string, rows [][]string) {
	fmt.Fprintf(b, "%s<table id=\"%s\">\n<thead><tr>", scrollBox, html.EscapeString(id))
	for _, h := range header {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
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

// runSpan is the run's time range: every time chart's x axis covers it whole.
func runSpan(r Report) span { return span{from: int64(r.Start), to: int64(r.End)} }

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
	lineChart(b, "chart-allocation", "GPU allocation over time (allocated / capacity, by model and mode)",
		"Share of the GPUs of healthy, ready nodes that workloads hold, for the whole cluster (all, black) and per GPU model and sharing mode.",
		series, timeAxis(), pctAxis(), runSpan(r), 1000)
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
	lineChart(b, "chart-capacity", "Free, stranded and fragmented GPU capacity",
		"Free: unallocated GPU capacity; free pieces: the part of it not on whole idle GPUs (shares of partly used GPUs, free MIG instances and replicas); stranded: free capacity no pending workload's shape can use; FGD fragment: free capacity the workload's pod shapes, weighted by how common each is, cannot use.",
		series, timeAxis(), gpuAxis(), runSpan(r), 0)
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
	lineChart(b, "chart-wait-cdf", "Queue wait CDF per ClusterQueue",
		"For each ClusterQueue, the share of its placed workloads that waited at most the time on the x axis (workloads never placed are left out).",
		series, waitAxis, cdfAxis, span{}, 1000)
}

// quotaChart: nominal, mean used and peak used GPUs per ClusterQueue.
func quotaChart(b *strings.Builder, r Report) {
	var groups []barGroup
	for _, q := range r.QuotaUse {
		groups = append(groups, barGroup{Label: q.ClusterQueue, Values: []int64{int64(q.Nominal), int64(q.MeanUsed), int64(q.PeakUsed)}})
	}
	barChart(b, "chart-quota", "Quota use vs nominal per ClusterQueue",
		"Each ClusterQueue's nominal GPU quota beside its time-weighted mean and peak use, in GPU-equivalents (MIG instances at their share of a GPU).",
		[]string{"nominal", "mean used", "peak used"}, groups, gpuAxis())
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
	lineChart(b, "chart-borrowing", "Borrowed GPUs over time per ClusterQueue",
		"GPU use above each ClusterQueue's nominal quota, lent by other queues of its cohort.",
		series, timeAxis(), gpuAxis(), runSpan(r), 0)
}

// heatmaps writes the heat maps, the busiest (most GPU capacity allocated) first. A map
// with nothing allocated, taken when a busier one exists, is a line of text: a blank
// picture (all work finished at the end of the run) says nothing a sentence cannot.
func heatmaps(b *strings.Builder, maps []Heatmap) {
	if len(maps) == 0 {
		return
	}
	busiest := 0
	for i, h := range maps {
		if heatTotal(h) > heatTotal(maps[busiest]) {
			busiest = i
		}
	}
	heatmapFigure(b, busiest, maps[busiest], true)
	for i, h := range maps {
		switch {
		case i == busiest:
		case heatTotal(h) == 0 && heatTotal(maps[busiest]) > 0:
			fmt.Fprintf(b, "<p class=\"note\" id=\"heatmap-%d\">At %s no GPU is allocated (every workload has finished or none is running); the node × GPU map is not drawn.</p>\n",
				i, html.EscapeString(sim.FormatDuration(h.T)))
		default:
			heatmapFigure(b, i, h, false)
		}
	}
}

// heatmapFigure draws heat map i with its title and a line saying how busy it is.
func heatmapFigure(b *strings.Builder, i int, h Heatmap, busiest bool) {
	note := fmt.Sprintf("Each row is a node, each cell one of its GPUs, shaded by the GPU capacity allocated on it; %s of %d GPUs allocated.",
		strings.TrimSuffix(FormatMilli(resources.MilliGPU(heatTotal(h))), ".000"), heatGPUs(h))
	heatmapChart(b, fmt.Sprintf("heatmap-%d", i), heatTitle(h, busiest), note, h)
}

// preemptionBins is the number of time bins of the preemption chart.
const preemptionBins = 40

// preemptionChart: preemptions, interruptions and evictions per time bin, over the
// whole run.
func preemptionChart(b *strings.Builder, r Report) {
	total := max(int64(r.End-r.Start), 1)
	kinds := []sim.EventKind{sim.EvPreempted, sim.EvInterrupted, sim.EvEvicted}
	counts := make([][]int64, len(kinds))
	for k := range kinds {
		counts[k] = make([]int64, preemptionBins)
	}
	for _, p := range r.Preemptions {
		bin := min(max(int64(p.T-r.Start)*preemptionBins/total, 0), preemptionBins-1)
		for k, kind := range kinds {
			if p.Event == kind {
				counts[k][bin]++
			}
		}
	}
	title := fmt.Sprintf("Preemptions over time (%d events, %s GPU-hours lost)", len(r.Preemptions), FormatGPUHours(r.LostGPUMilliSeconds))
	timeHistogram(b, "chart-preemptions", title,
		"Preemption notices (the scheduler's policy), spot interruptions (the provider reclaiming nodes) and evictions (the pod leaving, losing work since its last checkpoint), counted per time bin.",
		[]string{"preempted", "interrupted", "evicted"}, counts, runSpan(r), timeAxis(),
		axis{Label: "events", Format: func(v int64) string { return fmt.Sprint(v) }})
}

// withEnd extends a step series to the end of the run so its last value is drawn.
func withEnd(s lineSeries, end sim.Seconds) lineSeries {
	if n := len(s.Points); n > 0 && s.Points[n-1].X < int64(end) {
		s.Points = append(s.Points, xy{X: int64(end), Y: s.Points[n-1].Y})
	}
	return s
}
