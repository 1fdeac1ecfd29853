package report

import (
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// seriesKey is a GPU model and sharing mode, the key of a per-model allocation series.
type seriesKey struct{ model, mode string }

// allocSum is one series' allocated and ready capacity over the current state.
type allocSum struct {
	name                string // "<model>/<mode>"
	allocated, capacity resources.MilliGPU
}

// seriesPart is what one node's rows add to a series.
type seriesPart struct {
	key                 seriesKey
	allocated, capacity resources.MilliGPU
}

// allocParts adds up rows per series: every GPU names its series (so the series exists
// from then on), ready nodes' healthy GPUs count, at most one GPU each.
func allocParts(rows []sim.NodeState) []seriesPart {
	var out []seriesPart
	for _, n := range rows {
		for _, g := range n.GPUs {
			p := partFor(&out, seriesKey{g.Model, g.Mode})
			if n.Ready && g.Healthy {
				p.capacity += resources.MilliPerGPU
				p.allocated += min(g.Allocated, resources.MilliPerGPU)
			}
		}
	}
	return out
}

// partFor finds or appends the part of key (a node has one or two keys: a short scan).
func partFor(parts *[]seriesPart, key seriesKey) *seriesPart {
	for i := range *parts {
		if (*parts)[i].key == key {
			return &(*parts)[i]
		}
	}
	*parts = append(*parts, seriesPart{key: key})
	return &(*parts)[len(*parts)-1]
}

// addAlloc adds (sign 1) or takes away (sign -1) a node's parts from the series sums.
func (c *KPICollector) addAlloc(parts []seriesPart, sign resources.MilliGPU) {
	for _, p := range parts {
		s := c.sums[p.key]
		if s == nil {
			s = &allocSum{name: p.key.model + "/" + p.key.mode}
			c.sums[p.key] = s
		}
		s.allocated += sign * p.allocated
		s.capacity += sign * p.capacity
	}
}

// allocAcc integrates one allocation series.
type allocAcc struct {
	points []AllocationPoint
	// last is the last stored point; allocated and capacity integrate the samples.
	last                AllocationPoint
	hasLast             bool
	allocated, capacity integral
}

// take records a sample's value; a point is stored only when the value changes.
func (a *allocAcc) take(p AllocationPoint, clock int64) {
	if !a.hasLast || a.last.Allocated != p.Allocated || a.last.Capacity != p.Capacity {
		a.points = append(a.points, p)
		a.last, a.hasLast = p, true
	}
	a.allocated.set(int64(p.Allocated), clock)
	a.capacity.set(int64(p.Capacity), clock)
}

// sampleAllocation updates the "all" and "<model>/<mode>" series from the sums (a
// series whose GPUs are all gone stays, at zero), and the peak heat map.
func (c *KPICollector) sampleAllocation(t sim.Seconds) {
	all := AllocationPoint{T: t}
	for _, s := range c.sums {
		all.Allocated += s.allocated
		all.Capacity += s.capacity
		c.series(s.name).take(AllocationPoint{T: t, Allocated: s.allocated, Capacity: s.capacity}, c.clock)
	}
	c.series("all").take(all, c.clock)
	if all.Allocated > c.peakAlloc || c.peakHeatmap == nil {
		c.peakAlloc = all.Allocated
		h := c.nodes.heatmap(t)
		c.peakHeatmap = &h
	}
}

// series is the accumulator of a series, created on first use.
func (c *KPICollector) series(name string) *allocAcc {
	a := c.alloc[name]
	if a == nil {
		a = &allocAcc{}
		c.alloc[name] = a
	}
	return a
}
