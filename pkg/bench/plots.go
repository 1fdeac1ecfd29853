package bench

import (
	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// FragAllocationPlot is the allocation curve of each policy on one variant: GPU
// allocated against GPU demand arrived, both in % of the cluster's GPUs, the mean over
// the policy's seeds at each step of the curve. Policies keep the order of runs.
func FragAllocationPlot(title string, runs []FragRun) report.Plot {
	type acc struct{ sum, n int64 }
	var order []string
	byPolicy := map[string]map[int64]*acc{}
	for _, r := range runs {
		if r.Capacity <= 0 {
			continue
		}
		steps := byPolicy[r.Policy]
		if steps == nil {
			steps = map[int64]*acc{}
			byPolicy[r.Policy] = steps
			order = append(order, r.Policy)
		}
		for _, p := range r.Curve {
			a := steps[p.ArrivedPermille]
			if a == nil {
				a = &acc{}
				steps[p.ArrivedPermille] = a
			}
			a.sum += int64(p.Allocated) * 1000 / int64(r.Capacity)
			a.n++
		}
	}
	pct := report.PlotAxis{Format: report.FormatPermille}
	// Below 60% of the cluster every policy places everything: the plot shows the rest.
	plot := report.Plot{Title: title, X: pct, Y: pct, XMin: 600, YMin: 600}
	plot.X.Label, plot.Y.Label = "GPU demand arrived (% of cluster GPUs)", "GPU allocated (% of cluster GPUs)"
	for _, name := range order {
		steps := byPolicy[name]
		xs := make([]int64, 0, len(steps))
		for x := range steps {
			xs = append(xs, x)
		}
		slices.Sort(xs)
		s := report.PlotSeries{Name: name}
		for _, x := range xs {
			s.Points = append(s.Points, report.PlotPoint{X: x, Y: steps[x].sum / steps[x].n})
		}
		plot.Series = append(plot.Series, s)
	}
	return plot
}

// JCTWaitCDFPlot is each policy's queue-wait CDF: the share of started jobs that waited
// at most x. The x axis ends at the largest p95 wait of the policies, so the body of
// every distribution is readable (the tails are in the tables), and the y axis starts
// at the tens of percent below the smallest share of jobs that did not wait.
func JCTWaitCDFPlot(title string, rep JCTReport) report.Plot {
	var xMax int64
	yMin := int64(1000)
	for _, r := range rep.Results {
		xMax = max(xMax, int64(r.Wait.P95))
		if n := int64(len(r.Wait.Values)); n > 0 {
			zero := int64(sort.Search(len(r.Wait.Values), func(i int) bool { return r.Wait.Values[i] > 0 }))
			yMin = min(yMin, zero*1000/n/100*100)
		}
	}
	if yMin == 1000 {
		yMin = 0
	}
	plot := report.Plot{Title: title, XMax: xMax, YMin: yMin, YMax: 1000,
		X: report.PlotAxis{Label: "queue wait", Format: func(v int64) string { return sim.FormatDuration(sim.Seconds(v)) }},
		Y: report.PlotAxis{Label: "share of started jobs", Format: report.FormatPermille}}
	for _, r := range rep.Results {
		s := report.PlotSeries{Name: r.Policy, Step: true}
		n := int64(len(r.Wait.Values))
		for i, v := range r.Wait.Values {
			if int64(v) > xMax {
				s.Points = append(s.Points, report.PlotPoint{X: xMax, Y: int64(i) * 1000 / n})
				break
			}
			s.Points = append(s.Points, report.PlotPoint{X: int64(v), Y: int64(i+1) * 1000 / n})
		}
		plot.Series = append(plot.Series, s)
	}
	return plot
}
