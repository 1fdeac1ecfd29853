package dashboard

import (
	"fmt"
	"io"

	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// writeHistoryCharts draws a live history with the simulation report's chart code:
// allocation, free and stranded capacity, pending workloads and their wait, over the
// time since the first sample.
func writeHistoryCharts(w io.Writer, samples []Sample) error {
	if len(samples) == 0 {
		_, err := io.WriteString(w, `<p class="note" id="charts-empty">No sample yet: the history starts with the first snapshot read.</p>`+"\n")
		return err
	}
	first := samples[0].At
	xLabel := fmt.Sprintf("time since %s UTC", first.UTC().Format("2006-01-02 15:04:05"))
	t := func(s Sample) sim.Seconds { return sim.Seconds(s.At.Sub(first)) }
	alloc := report.TimeSeries{Name: "all"}
	free := report.TimeSeries{Name: "free"}
	strand := report.TimeSeries{Name: "stranded"}
	pending := report.TimeSeries{Name: "pending"}
	mean := report.TimeSeries{Name: "mean wait"}
	longest := report.TimeSeries{Name: "max wait"}
	for _, s := range samples {
		alloc.Points = append(alloc.Points, report.TimePoint{T: t(s), V: report.Permille(int64(s.Allocated), int64(s.Capacity))})
		free.Points = append(free.Points, report.TimePoint{T: t(s), V: int64(s.Capacity - s.Allocated)})
		strand.Points = append(strand.Points, report.TimePoint{T: t(s), V: int64(s.Stranded)})
		pending.Points = append(pending.Points, report.TimePoint{T: t(s), V: int64(s.Pending)})
		mean.Points = append(mean.Points, report.TimePoint{T: t(s), V: int64(s.MeanWait)})
		longest.Points = append(longest.Points, report.TimePoint{T: t(s), V: int64(s.MaxWait)})
	}
	end := t(samples[len(samples)-1])
	charts := []report.TimeChart{
		{ID: "chart-live-allocation", Title: "GPU allocation over time", Unit: report.UnitPermille,
			Note:   "Share of the GPUs of healthy, ready nodes that workloads hold.",
			Series: []report.TimeSeries{alloc}},
		{ID: "chart-live-capacity", Title: "Free and stranded GPU capacity", Unit: report.UnitMilliGPU,
			Note:   "Free: unallocated GPU capacity on healthy, ready nodes; stranded: the part of it no pending workload's pod fits in (its GPU-equivalents per pod against each free device, or whole free GPUs).",
			Series: []report.TimeSeries{free, strand}},
		{ID: "chart-live-pending", Title: "Pending workloads", Unit: report.UnitCount, YLabel: "workloads",
			Note:   "Workloads waiting for admission (pending, or evicted and queued again).",
			Series: []report.TimeSeries{pending}},
		{ID: "chart-live-wait", Title: "Wait of pending workloads", Unit: report.UnitDuration,
			Note:   "How long the workloads pending at each sample had waited: their mean and the longest.",
			Series: []report.TimeSeries{mean, longest}},
	}
	for _, c := range charts {
		c.XLabel, c.End = xLabel, max(end, sim.Seconds(1))
		if err := report.WriteTimeChart(w, c); err != nil {
			return err
		}
	}
	return nil
}
