package report

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// scratchKPIs computes every sampled KPI from the whole state at each sample, and
// integrates by adding value × interval at every sample: the reference the incremental
// collector is checked against.
type scratchKPIs struct {
	opts       KPIOptions
	seen       map[pendingKey]bool
	seenShapes map[GPUShape]int64
	started    bool
	prev       sim.Seconds
	start      sim.Seconds
	// Current values and their integrals (value × ms).
	alloc           map[string]AllocationPoint
	allocMs, capMs  map[string]int64
	capPoint        CapacityPoint
	capHas          bool
	capAt           time.Duration
	strandMs, fragM int64
	quota           map[string]QuotaPoint
	usedMs          map[string]int64
	// Heat maps: the last state, the peak one and those taken at the chosen times.
	last     sim.ClusterState
	peak     *Heatmap
	peakMax  resources.MilliGPU
	heatmaps []Heatmap
	nextHeat int
}

func newScratchKPIs(o KPIOptions) *scratchKPIs {
	return &scratchKPIs{opts: o, seen: map[pendingKey]bool{}, seenShapes: map[GPUShape]int64{}, alloc: map[string]AllocationPoint{},
		allocMs: map[string]int64{}, capMs: map[string]int64{}, quota: map[string]QuotaPoint{}, usedMs: map[string]int64{}}
}

// sample integrates the previous values up to s.T and takes s's.
func (r *scratchKPIs) sample(s sim.ClusterState) {
	if !r.started {
		r.started, r.start = true, s.T
	} else {
		if dt := (s.T.Duration() - r.prev.Duration()).Milliseconds(); dt > 0 {
			r.integrate(dt)
		}
		r.takeHeatmaps(s.T, false)
	}
	r.prev, r.last = s.T, s
	for _, p := range s.Pending {
		if sh, ok := ShapeOf(p.PerPod); ok && !r.seen[pendingKey{p.Workload, sh}] {
			r.seen[pendingKey{p.Workload, sh}] = true
			r.seenShapes[sh] += int64(max(p.Pods, 1))
		}
	}
	r.takeAllocation(s)
	t := s.T.Duration()
	if !r.capHas || r.opts.CapacityEvery == 0 || t-r.capAt >= r.opts.CapacityEvery {
		r.capPoint, r.capHas, r.capAt = r.capacity(s), true, t
	}
	for _, q := range s.Queues {
		r.quota[q.Name] = QuotaPoint{Used: gpuEquivalentOf(q.Usage), Borrowed: gpuEquivalentOf(q.Borrowed), Nominal: gpuEquivalentOf(q.Nominal)}
	}
}

func (r *scratchKPIs) integrate(dt int64) {
	for k, p := range r.alloc {
		r.allocMs[k] += int64(p.Allocated) * dt
		r.capMs[k] += int64(p.Capacity) * dt
	}
	if r.capHas {
		r.strandMs += int64(r.capPoint.Stranded) * dt
		r.fragM += int64(r.capPoint.Frag) * dt
	}
	for k, q := range r.quota {
		r.usedMs[k] += int64(q.Used) * dt
	}
}

// takeAllocation sums every GPU into its series and "all"; series seen before and
// absent now are zero.
func (r *scratchKPIs) takeAllocation(s sim.ClusterState) {
	for k := range r.alloc {
		r.alloc[k] = AllocationPoint{}
	}
	all := AllocationPoint{}
	for _, n := range s.Nodes {
		for _, g := range n.GPUs {
			k := g.Model + "/" + g.Mode
			p := r.alloc[k]
			if n.Ready && g.Healthy {
				a := min(g.Allocated, resources.MilliPerGPU)
				p.Capacity += resources.MilliPerGPU
				p.Allocated += a
				all.Capacity += resources.MilliPerGPU
				all.Allocated += a
			}
			r.alloc[k] = p
		}
	}
	r.alloc["all"] = all
	if all.Allocated > r.peakMax || r.peak == nil {
		h := scratchHeatmap(s, s.T)
		r.peak, r.peakMax = &h, all.Allocated
	}
}

// takeHeatmaps takes, from the last state, the heat maps of the chosen times before t
// (at or before t at the end).
func (r *scratchKPIs) takeHeatmaps(t sim.Seconds, end bool) {
	for ; r.nextHeat < len(r.opts.HeatmapTimes); r.nextHeat++ {
		at := r.opts.HeatmapTimes[r.nextHeat]
		if at > t || (at == t && !end) {
			return
		}
		if at >= r.start {
			r.heatmaps = append(r.heatmaps, scratchHeatmap(r.last, at))
		}
	}
}

// scratchHeatmap is every row's GPU allocation, rows by node name (stable: a name's
// rows keep the state's order).
func scratchHeatmap(s sim.ClusterState, at sim.Seconds) Heatmap {
	h := Heatmap{T: at, Rows: []HeatmapRow{}}
	for _, n := range s.Nodes {
		row := HeatmapRow{Node: n.Name, Down: !n.Ready, GPUs: []resources.MilliGPU{}}
		for _, g := range n.GPUs {
			row.GPUs = append(row.GPUs, g.Allocated)
		}
		h.Rows = append(h.Rows, row)
	}
	slices.SortStableFunc(h.Rows, func(a, b HeatmapRow) int { return cmp.Compare(a.Node, b.Node) })
	return h
}

// wantHeatmaps are the heat maps a report ending at end has.
func (r *scratchKPIs) wantHeatmaps(end sim.Seconds) []Heatmap {
	if len(r.opts.HeatmapTimes) == 0 {
		return []Heatmap{*r.peak, scratchHeatmap(r.last, end)}
	}
	r.takeHeatmaps(end, true)
	if r.peak == nil {
		return r.heatmaps
	}
	return append([]Heatmap{*r.peak}, r.heatmaps...)
}

// capacity is the capacity point of the whole state.
func (r *scratchKPIs) capacity(s sim.ClusterState) CapacityPoint {
	p := CapacityPoint{T: s.T}
	p.Free, p.FreeWhole, p.FreePieces = freeParts(s.Nodes)
	shapes := r.opts.Shapes
	if len(shapes) == 0 {
		shapes = sortShapes(r.seenShapes)
	}
	var pending []GPUShape
	seen := map[GPUShape]bool{}
	for _, x := range s.Pending {
		if sh, ok := ShapeOf(x.PerPod); ok && !seen[sh] {
			seen[sh] = true
			pending = append(pending, sh)
		}
	}
	p.Stranded = strandedCapacity(s.Nodes, pending)
	p.Frag = clusterFragment(s.Nodes, shapes)
	return p
}

// check compares the collector's current values with the reference's.
func (r *scratchKPIs) check(c *KPICollector) error {
	for k, want := range r.alloc {
		a := c.alloc[k]
		if a == nil || a.allocated.value != int64(want.Allocated) || a.capacity.value != int64(want.Capacity) {
			return fmt.Errorf("series %s: collector %+v, from scratch %+v", k, a, want)
		}
	}
	if len(c.alloc) != len(r.alloc) {
		return fmt.Errorf("%d series, from scratch %d", len(c.alloc), len(r.alloc))
	}
	if got := c.capacity[len(c.capacity)-1]; got != r.capPoint {
		return fmt.Errorf("capacity %+v, from scratch %+v", got, r.capPoint)
	}
	for k, want := range r.quota {
		q := c.quota[k]
		if got := (QuotaPoint{Used: q.last.Used, Borrowed: q.last.Borrowed, Nominal: q.last.Nominal}); got != want {
			return fmt.Errorf("queue %s: %+v, from scratch %+v", k, got, want)
		}
	}
	return nil
}

// checkReport compares a report's heat maps with the reference's, and its means with
// the per-sample integrals.
func (r *scratchKPIs) checkReport(rep Report, end sim.Seconds) error {
	if want := r.wantHeatmaps(end); !reflect.DeepEqual(rep.Heatmaps, want) && (len(rep.Heatmaps) > 0 || len(want) > 0) {
		return fmt.Errorf("heat maps %+v, from scratch %+v", rep.Heatmaps, want)
	}
	tail := max((end.Duration() - r.prev.Duration()).Milliseconds(), 0)
	r.integrate(tail)
	for _, a := range rep.Allocation {
		if want := Permille(r.allocMs[a.Key], r.capMs[a.Key]); a.MeanPermille != want {
			return fmt.Errorf("series %s: mean %d‰, per-sample integral %d‰", a.Key, a.MeanPermille, want)
		}
	}
	span := (end.Duration() - r.start.Duration()).Milliseconds()
	if span <= 0 {
		return nil
	}
	if s, f := resources.MilliGPU(r.strandMs/span), resources.MilliGPU(r.fragM/span); rep.MeanStrandedMilli != s || rep.MeanFragMilli != f {
		return fmt.Errorf("mean stranded %d, frag %d; per-sample integrals %d, %d", rep.MeanStrandedMilli, rep.MeanFragMilli, s, f)
	}
	for _, q := range rep.QuotaUse {
		if want := resources.MilliGPU(r.usedMs[q.ClusterQueue] / span); q.MeanUsed != want {
			return fmt.Errorf("queue %s: mean used %d, per-sample integral %d", q.ClusterQueue, q.MeanUsed, want)
		}
	}
	return nil
}

// clusterFragment is FGD's expected fragmentation of the cluster from scratch, the
// reference for capacityTotals.fragment: the shape-count weighted mean over shapes of
// the summed node fragments, in milli-GPU (one integer division at the end).
func clusterFragment(nodes []sim.NodeState, shapes []ShapeCount) resources.MilliGPU {
	var total, weight int64
	for _, sc := range shapes {
		weight += sc.Count
	}
	if weight == 0 {
		return 0
	}
	for i := range nodes {
		for _, sc := range shapes {
			total += sc.Count * int64(nodeFragment(&nodes[i], sc.Shape))
		}
	}
	return resources.MilliGPU(total / weight)
}
