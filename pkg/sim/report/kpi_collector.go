package report

import (
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
	// HeatmapTimes are the times of the node × GPU heat maps, after the one at the peak
	// of GPU allocation, which every report has; when empty, the other is at the end.
	HeatmapTimes []sim.Seconds
	// CapacityEvery thins the stranded-capacity and fragmentation series (the costliest
	// KPIs) to at most one point per interval; 0 computes them at every sample.
	CapacityEvery time.Duration
}

// KPICollector is an Observer that turns the simulator's events and state samples into a
// Report. It keeps per-workload timestamps and integrates sampled quantities piecewise
// (each sample's values hold until the next one).
//
// It is a sim.DeltaObserver: it keeps the state's nodes, pending pod sets and queues with
// what each adds to the KPIs, and a sample updates only what changed (the allocation
// sums at once, the capacity parts when a capacity point is due). Full samples
// (OnSample) are compared with the kept state and applied the same way.
type KPICollector struct {
	opts        KPIOptions
	workloads   map[string]*workloadTrack
	preemptions []PreemptionPoint
	seenShapes  map[GPUShape]int64
	seenPending map[pendingKey]bool

	started bool
	start   time.Duration
	prevT   sim.Seconds // the last sample's time
	clock   int64       // the sum of the sampled intervals in ms (integral.go)

	nodes   nodeTable
	sums    map[seriesKey]*allocSum
	pending pendingSet
	capTot  capacityTotals

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
		nodes:       newNodeTable(),
		sums:        map[seriesKey]*allocSum{},
		pending:     newPendingSet(),
		capTot:      newCapacityTotals(),
		alloc:       map[string]*allocAcc{},
		quota:       map[string]*quotaAcc{},
	}
}

var _ sim.DeltaObserver = (*KPICollector)(nil)

var _ sim.EventFilter = (*KPICollector)(nil)

// WantsEvent: the KPIs read every kind but rejections (a pending workload's queue and
// wait come from its submission and placement).
func (c *KPICollector) WantsEvent(k sim.EventKind) bool { return k != sim.EvRejected }

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

// change is one sample as the collector applies it: the rows of the nodes that may have
// changed, the nodes gone from the state, the queues, and the pending pod sets added
// and resolved.
type change struct {
	t        sim.Seconds
	nodes    []sim.NodeState
	gone     []string
	queues   []sim.QueueState
	pending  []sim.PendingShape
	resolved []string
}

// OnDelta applies what changed since the previous sample.
func (c *KPICollector) OnDelta(d sim.StateDelta) {
	c.apply(change{t: d.T, nodes: d.Nodes, queues: d.Queues, pending: d.Pending, resolved: d.Resolved})
}

// OnSample applies a whole state (see diff).
func (c *KPICollector) OnSample(s sim.ClusterState) { c.apply(c.diff(s)) }

// apply integrates the previous sample up to this one and takes this one's values.
func (c *KPICollector) apply(ch change) {
	t := ch.t.Duration()
	if !c.started {
		c.started, c.start = true, t
	} else {
		c.advance(t)
		c.takeHeatmapsBefore(t) // from the state before this sample's changes
	}
	c.prevT = ch.t
	for _, name := range ch.gone {
		c.removeNode(name)
	}
	c.putNodes(ch.nodes)
	c.pending.resolve(ch.resolved)
	c.pending.add(ch.pending)
	if len(c.opts.Shapes) == 0 {
		c.learnShapes(ch.pending)
	}
	c.sampleAllocation(ch.t)
	c.sampleCapacity(ch.t)
	c.sampleQuota(ch.t, ch.queues)
}

// takeHeatmapsBefore records, from the current state (the previous sample's), the heat
// maps of the chosen times in [prev.T, t): that state held at those times.
func (c *KPICollector) takeHeatmapsBefore(t time.Duration) {
	for c.nextHeatmap < len(c.opts.HeatmapTimes) && c.opts.HeatmapTimes[c.nextHeatmap].Duration() < t {
		at := c.opts.HeatmapTimes[c.nextHeatmap]
		if at.Duration() >= c.start {
			c.heatmaps = append(c.heatmaps, c.nodes.heatmap(at))
		}
		c.nextHeatmap++
	}
}
