package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// KPIOptions configure a KPICollector.
type KPIOptions struct {
	// Shapes is the workload's pod-shape distribution for FGD fragmentation (see
	// ShapesOf). When empty, the shapes of workloads seen pending are used.
	Shapes []ShapeCount
	// HeatmapTimes are the times of the node × GPU heat maps. When empty, the report has
	// one at the peak of GPU allocation and one at the end.
	HeatmapTimes []sim.Seconds
	// CapacityEvery thins the stranded-capacity and fragmentation series (the costliest
	// KPIs) to at most one point per interval; 0 computes them at every sample.
	CapacityEvery time.Duration
}

// KPICollector is an Observer that turns the simulator's events and state samples into a
// Report. It keeps per-workload timestamps and integrates sampled quantities piecewise
// (each sample's values hold until the next one).
type KPICollector struct {
	opts        KPIOptions
	workloads   map[string]*workloadTrack
	preemptions []PreemptionPoint
	seenShapes  map[GPUShape]int64
	seenPending map[pendingKey]bool

	started bool
	start   time.Duration
	prev    sim.ClusterState

	alloc    map[string]*allocAcc
	capacity []CapacityPoint
	capAcc   capacityAcc
	quota    map[string]*quotaAcc

	heatmaps    []Heatmap
	nextHeatmap int
	peakAlloc   resources.MilliGPU
	peakHeatmap *Heatmap
}

// workloadTrack is what the collector remembers about one workload.
type workloadTrack struct {
	cq, lq       string
	submit       time.Duration
	pending      bool
	pendingSince time.Duration
	wait         time.Duration
	placed       bool
	finished     bool
	jct          time.Duration
	preempted    int
	interrupted  int
	evicted      int
	lost         int64
}

// allocAcc integrates one allocation series.
type allocAcc struct {
	points  []AllocationPoint
	allocMs int64 // ∫ allocated dt, milli-GPU × ms
	capMs   int64 // ∫ capacity dt
	// last is the last stored point, lastValue the last sample's value.
	last      AllocationPoint
	hasLast   bool
	lastValue AllocationPoint
}

// capacityAcc integrates stranded capacity and fragmentation.
type capacityAcc struct {
	last               CapacityPoint
	has                bool
	strandedMs, fragMs int64
	lastComputed       time.Duration
	computedOnce       bool
}

// quotaAcc integrates one ClusterQueue's usage.
type quotaAcc struct {
	q                  QuotaUse
	last               QuotaPoint
	has                bool
	usedMs, borrowedMs int64
}

// NewKPICollector returns a collector with the given options.
func NewKPICollector(o KPIOptions) *KPICollector {
	times := slices.Clone(o.HeatmapTimes)
	slices.Sort(times)
	o.HeatmapTimes = times
	return &KPICollector{
		opts:        o,
		workloads:   map[string]*workloadTrack{},
		seenShapes:  map[GPUShape]int64{},
		seenPending: map[pendingKey]bool{},
		alloc:       map[string]*allocAcc{},
		quota:       map[string]*quotaAcc{},
	}
}

var _ sim.Observer = (*KPICollector)(nil)

// OnEvent records one event log record.
func (c *KPICollector) OnEvent(r sim.EventRecord) {
	if r.Workload == "" {
		return
	}
	t := r.T.Duration()
	w := c.workloads[r.Workload]
	if w == nil {
		w = &workloadTrack{submit: t}
		c.workloads[r.Workload] = w
	}
	if r.ClusterQueue != "" {
		w.cq = r.ClusterQueue
	}
	if r.LocalQueue != "" {
		w.lq = r.LocalQueue
	}
	switch r.Event {
	case sim.EvSubmitted:
		w.submit, w.pending, w.pendingSince = t, true, t
	case sim.EvRequeued:
		w.pending, w.pendingSince = true, t
	case sim.EvPlaced:
		if w.pending {
			w.wait += t - w.pendingSince
		}
		w.pending, w.placed = false, true
	case sim.EvFinished:
		w.finished, w.jct, w.pending = true, t-w.submit, false
	case sim.EvPreempted, sim.EvInterrupted, sim.EvEvicted:
		c.onDisruption(r, w)
	}
}

func (c *KPICollector) onDisruption(r sim.EventRecord, w *workloadTrack) {
	switch r.Event {
	case sim.EvPreempted:
		w.preempted++
	case sim.EvInterrupted:
		w.interrupted++
	case sim.EvEvicted:
		w.evicted++
		w.lost += r.LostGPUMilliSeconds
	}
	c.preemptions = append(c.preemptions, PreemptionPoint{
		T: r.T, Event: r.Event, Workload: r.Workload, ClusterQueue: w.cq,
		LostGPUMilliSeconds: r.LostGPUMilliSeconds,
	})
}

// OnSample integrates the previous sample up to this one and takes this one's values.
func (c *KPICollector) OnSample(s sim.ClusterState) {
	t := s.T.Duration()
	if !c.started {
		c.started, c.start = true, t
	} else {
		c.integrate(t)
		c.takeHeatmapsBefore(t)
	}
	c.prev = s
	if len(c.opts.Shapes) == 0 {
		c.learnShapes(s.Pending)
	}
	c.sampleAllocation(s)
	c.sampleCapacity(s)
	c.sampleQuota(s)
}

// pendingKey is one pending pod set's shape, counted once for FGD's distribution.
type pendingKey struct {
	workload string
	shape    GPUShape
}

// learnShapes adds the shapes of newly seen pending pod sets to the distribution used
// when no workload distribution was configured; a pod set counts once, however many
// samples it stays pending in.
func (c *KPICollector) learnShapes(pending []sim.PendingShape) {
	for _, p := range pending {
		sh, ok := ShapeOf(p.PerPod)
		if !ok {
			continue
		}
		k := pendingKey{p.Workload, sh}
		if !c.seenPending[k] {
			c.seenPending[k] = true
			c.seenShapes[sh] += int64(max(p.Pods, 1))
		}
	}
}

// integrate adds the previous sample's values over [prev.T, t).
func (c *KPICollector) integrate(t time.Duration) {
	dt := (t - c.prev.T.Duration()).Milliseconds()
	if dt <= 0 {
		return
	}
	for _, a := range c.alloc {
		a.allocMs += int64(a.lastValue.Allocated) * dt
		a.capMs += int64(a.lastValue.Capacity) * dt
	}
	if c.capAcc.has {
		c.capAcc.strandedMs += int64(c.capAcc.last.Stranded) * dt
		c.capAcc.fragMs += int64(c.capAcc.last.Frag) * dt
	}
	for _, q := range c.quota {
		q.usedMs += int64(q.last.Used) * dt
		q.borrowedMs += int64(q.last.Borrowed) * dt
	}
}

// seriesKey is a GPU model and sharing mode, the key of a per-model allocation series.
type seriesKey struct{ model, mode string }

// sampleAllocation updates the "all" and "<model>/<mode>" series; a point is stored only
// when the values change.
func (c *KPICollector) sampleAllocation(s sim.ClusterState) {
	all := AllocationPoint{T: s.T}
	per := map[seriesKey]*AllocationPoint{}
	for _, n := range s.Nodes {
		for _, g := range n.GPUs {
			k := seriesKey{g.Model, g.Mode}
			p := per[k]
			if p == nil {
				p = &AllocationPoint{T: s.T}
				per[k] = p
			}
			if n.Ready && g.Healthy {
				a := min(g.Allocated, resources.MilliPerGPU)
				p.Capacity += resources.MilliPerGPU
				p.Allocated += a
				all.Capacity += resources.MilliPerGPU
				all.Allocated += a
			}
		}
	}
	if all.Allocated > c.peakAlloc || c.peakHeatmap == nil {
		c.peakAlloc = all.Allocated
		h := heatmapOf(s)
		c.peakHeatmap = &h
	}
	vals := map[string]AllocationPoint{"all": all}
	for k, p := range per {
		vals[k.model+"/"+k.mode] = *p
	}
	// Series seen before but absent now drop to zero.
	for k := range c.alloc {
		if _, ok := vals[k]; !ok {
			vals[k] = AllocationPoint{T: s.T}
		}
	}
	for k, p := range vals {
		a := c.alloc[k]
		if a == nil {
			a = &allocAcc{}
			c.alloc[k] = a
		}
		if !a.hasLast || a.last.Allocated != p.Allocated || a.last.Capacity != p.Capacity {
			a.points = append(a.points, p)
			a.last, a.hasLast = p, true
		}
		a.lastValue = p
	}
}

// sampleCapacity computes free, stranded and fragmented capacity, at most once per
// CapacityEvery (the previous values hold in between).
func (c *KPICollector) sampleCapacity(s sim.ClusterState) {
	t := s.T.Duration()
	if c.capAcc.computedOnce && c.opts.CapacityEvery > 0 && t-c.capAcc.lastComputed < c.opts.CapacityEvery {
		return
	}
	p := CapacityPoint{T: s.T}
	for _, n := range s.Nodes {
		if !n.Ready {
			continue
		}
		for _, g := range n.GPUs {
			f := gpuFree(g)
			p.Free += f
			mode := g.Mode
			if g.Allocated == 0 && g.Healthy && (mode == "exclusive" || mode == "fractional" || mode == "") {
				p.FreeWhole += f
			} else {
				p.FreePieces += f
			}
		}
	}
	p.Stranded = strandedCapacity(s.Nodes, pendingShapes(s.Pending))
	p.Frag = clusterFragment(s.Nodes, c.fragShapes())
	c.capacity = append(c.capacity, p)
	c.capAcc.last, c.capAcc.has = p, true
	c.capAcc.lastComputed, c.capAcc.computedOnce = t, true
}

// fragShapes is the configured shape distribution, or the shapes seen pending so far.
func (c *KPICollector) fragShapes() []ShapeCount {
	if len(c.opts.Shapes) > 0 {
		return c.opts.Shapes
	}
	return sortShapes(c.seenShapes)
}

// pendingShapes is the distinct GPU shapes of the pending workloads.
func pendingShapes(pending []sim.PendingShape) []GPUShape {
	seen := map[GPUShape]bool{}
	var out []GPUShape
	for _, p := range pending {
		if s, ok := ShapeOf(p.PerPod); ok && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// sampleQuota records each ClusterQueue's GPU usage, borrowing and nominal quota.
func (c *KPICollector) sampleQuota(s sim.ClusterState) {
	for _, qs := range s.Queues {
		q := c.quota[qs.Name]
		if q == nil {
			q = &quotaAcc{q: QuotaUse{ClusterQueue: qs.Name}}
			c.quota[qs.Name] = q
		}
		p := QuotaPoint{T: s.T, Used: gpuMilliOf(qs.Usage), Borrowed: gpuMilliOf(qs.Borrowed), Nominal: gpuQuotaMilliOf(qs.Nominal)}
		if !q.has || p.Used != q.last.Used || p.Borrowed != q.last.Borrowed || p.Nominal != q.last.Nominal {
			q.q.Points = append(q.q.Points, p)
		}
		q.last, q.has = p, true
		q.q.PeakUsed = max(q.q.PeakUsed, p.Used)
		q.q.PeakBorrowed = max(q.q.PeakBorrowed, p.Borrowed)
		q.q.Nominal = p.Nominal
	}
}

// takeHeatmapsBefore records, from the previous sample, the heat maps of the chosen times
// in [prev.T, t): the previous state is the one that held at those times.
func (c *KPICollector) takeHeatmapsBefore(t time.Duration) {
	for c.nextHeatmap < len(c.opts.HeatmapTimes) && c.opts.HeatmapTimes[c.nextHeatmap].Duration() < t {
		at := c.opts.HeatmapTimes[c.nextHeatmap]
		if at.Duration() >= c.start {
			h := heatmapOf(c.prev)
			h.T = at
			c.heatmaps = append(c.heatmaps, h)
		}
		c.nextHeatmap++
	}
}

// heatmapOf copies every GPU's allocation out of a sample.
func heatmapOf(s sim.ClusterState) Heatmap {
	h := Heatmap{T: s.T, Rows: make([]HeatmapRow, 0, len(s.Nodes))}
	for _, n := range s.Nodes {
		row := HeatmapRow{Node: n.Name, Down: !n.Ready, GPUs: make([]resources.MilliGPU, len(n.GPUs))}
		for i, g := range n.GPUs {
			row.GPUs[i] = g.Allocated
		}
		h.Rows = append(h.Rows, row)
	}
	slices.SortFunc(h.Rows, func(a, b HeatmapRow) int { return cmp.Compare(a.Node, b.Node) })
	return h
}
