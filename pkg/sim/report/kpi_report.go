package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// Report closes the run at end (the simulated time the run stopped) and returns the KPIs.
// The collector can keep observing afterwards; Report does not change its state.
func (c *KPICollector) Report(end sim.Seconds) Report {
	r := Report{Start: sim.Seconds(c.start), End: end}
	c.queueReports(&r)
	span := (end.Duration() - c.start).Milliseconds()
	tail := int64(0)
	if c.started {
		tail = max((end.Duration() - c.prevT.Duration()).Milliseconds(), 0)
	}
	for _, k := range sortedKeys(c.alloc) {
		a := c.alloc[k]
		mean := Permille(a.allocated.through(c.clock, tail), a.capacity.through(c.clock, tail))
		r.Allocation = append(r.Allocation, AllocationSeries{Key: k, MeanPermille: mean, Points: slices.Clone(a.points)})
	}
	r.Capacity = slices.Clone(c.capacity)
	if span > 0 && c.capAcc.has {
		r.MeanStrandedMilli = resources.MilliGPU(c.capAcc.stranded.through(c.clock, tail) / span)
		r.MeanFragMilli = resources.MilliGPU(c.capAcc.frag.through(c.clock, tail) / span)
	}
	r.Preemptions = slices.Clone(c.preemptions)
	for _, p := range c.preemptions {
		r.LostGPUMilliSeconds += p.LostGPUMilliSeconds
	}
	for _, k := range sortedKeys(c.quota) {
		q := c.quota[k]
		u := q.q
		u.Points = slices.Clone(q.q.Points)
		if span > 0 {
			u.MeanUsed = resources.MilliGPU(q.used.through(c.clock, tail) / span)
			u.MeanBorrowed = resources.MilliGPU(q.borrowed.through(c.clock, tail) / span)
		}
		u.UtilisationPermille = Permille(int64(u.MeanUsed), int64(u.Nominal))
		r.QuotaUse = append(r.QuotaUse, u)
	}
	r.Heatmaps = c.reportHeatmaps(end)
	return r
}

// queueReports fills Overall and one QueueKPIs per ClusterQueue (the LocalQueue when a
// workload never reached a ClusterQueue, "-" when neither is known).
func (c *KPICollector) queueReports(r *Report) {
	type acc struct {
		k          QueueKPIs
		wait, jcts []time.Duration
	}
	groups := map[string]*acc{}
	all := &acc{k: QueueKPIs{Name: "all"}}
	for _, id := range sortedKeys(c.workloads) {
		w := c.workloads[id]
		name := cmp.Or(w.cq, w.lq, "-")
		g := groups[name]
		if g == nil {
			g = &acc{k: QueueKPIs{Name: name}}
			groups[name] = g
		}
		for _, a := range []*acc{all, g} {
			a.k.Submitted++
			if w.placed {
				a.k.Placed++
				a.wait = append(a.wait, w.wait)
			} else {
				a.k.StillPending++
			}
			if w.finished {
				a.k.Finished++
				a.jcts = append(a.jcts, w.jct)
			}
			a.k.Preempted += w.preempted
			a.k.Interrupted += w.interrupted
			a.k.Evicted += w.evicted
			a.k.LostGPUMilliSeconds += w.lost
		}
	}
	finish := func(a *acc) QueueKPIs {
		a.k.Wait = Summarise(a.wait)
		a.k.JCT = Summarise(a.jcts)
		return a.k
	}
	r.Overall = finish(all)
	for _, name := range sortedKeys(groups) {
		r.Queues = append(r.Queues, finish(groups[name]))
	}
}

// reportHeatmaps returns the chosen heat maps (those at or after the last sample come from
// it), or the peak and end maps when no times were chosen.
func (c *KPICollector) reportHeatmaps(end sim.Seconds) []Heatmap {
	if !c.started {
		return nil
	}
	if len(c.opts.HeatmapTimes) == 0 {
		last := c.nodes.heatmap(end)
		if c.peakHeatmap == nil {
			return []Heatmap{last}
		}
		return []Heatmap{*c.peakHeatmap, last}
	}
	// The busiest moment comes first whatever times were chosen: it is the map that
	// shows how full the cluster got.
	var out []Heatmap
	if c.peakHeatmap != nil {
		out = append(out, *c.peakHeatmap)
	}
	out = append(out, c.heatmaps...)
	for _, at := range c.opts.HeatmapTimes[c.nextHeatmap:] {
		if at.Duration() < c.start || at > end {
			continue
		}
		out = append(out, c.nodes.heatmap(at))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
