package report

import (
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// capacityAcc integrates stranded capacity and fragmentation.
type capacityAcc struct {
	last           CapacityPoint
	has            bool
	stranded, frag integral
	lastComputed   time.Duration
	computedOnce   bool
}

// capacityPart is what one node's rows add to a capacity point. frag holds, per shape
// column (capacityTotals.columns), the rows' summed FGD fragment for that shape.
type capacityPart struct {
	free, whole, pieces, stranded resources.MilliGPU
	frag                          []int64
}

// capacityTotals are the node entries' parts added up. FGD's fragmentation is a
// count-weighted sum over shapes of per-shape totals, so a per-shape column total is
// kept and new shapes (learned ones) add a column instead of a recomputation.
type capacityTotals struct {
	free, whole, pieces, stranded resources.MilliGPU
	frag                          []int64
	columns                       []GPUShape
	column                        map[GPUShape]int
	// strandedFor are the pending shapes the stranded parts were computed for.
	strandedFor []GPUShape
}

func newCapacityTotals() capacityTotals { return capacityTotals{column: map[GPUShape]int{}} }

// add adds (sign 1) or takes away (sign -1) one part.
func (t *capacityTotals) add(p *capacityPart, sign int64) {
	m := resources.MilliGPU(sign)
	t.free += m * p.free
	t.whole += m * p.whole
	t.pieces += m * p.pieces
	t.stranded += m * p.stranded
	for j, f := range p.frag {
		t.frag[j] += sign * f
	}
}

// addColumns gives every new shape a column; it reports whether there were any.
func (t *capacityTotals) addColumns(shapes []ShapeCount) bool {
	added := false
	for _, sc := range shapes {
		if _, ok := t.column[sc.Shape]; !ok {
			t.column[sc.Shape] = len(t.columns)
			t.columns = append(t.columns, sc.Shape)
			t.frag = append(t.frag, 0)
			added = true
		}
	}
	return added
}

// partOf computes one node's part in full.
func (t *capacityTotals) partOf(rows []sim.NodeState, pending []GPUShape) capacityPart {
	p := capacityPart{stranded: strandedCapacity(rows, pending), frag: make([]int64, len(t.columns))}
	p.free, p.whole, p.pieces = freeParts(rows)
	for j, s := range t.columns {
		p.frag[j] = nodeFragments(rows, s)
	}
	return p
}

// catchUp brings a node's part to new columns and, when the pending shapes changed, to
// their stranded capacity (a part just refreshed is left as it is).
func (t *capacityTotals) catchUp(e *nodeEntry, pending []GPUShape, restrand bool) {
	for j := len(e.cap.frag); j < len(t.columns); j++ {
		f := nodeFragments(e.rows, t.columns[j])
		e.cap.frag = append(e.cap.frag, f)
		t.frag[j] += f
	}
	if restrand {
		s := strandedCapacity(e.rows, pending)
		t.stranded += s - e.cap.stranded
		e.cap.stranded = s
	}
}

// fragment is FGD's expected fragmentation: the count-weighted mean over shapes of the
// column totals (one integer division at the end, as FGD's definition has it).
func (t *capacityTotals) fragment(shapes []ShapeCount) resources.MilliGPU {
	var total, weight int64
	for _, sc := range shapes {
		weight += sc.Count
	}
	if weight == 0 {
		return 0
	}
	for _, sc := range shapes {
		total += sc.Count * t.frag[t.column[sc.Shape]]
	}
	return resources.MilliGPU(total / weight)
}

// sampleCapacity records free, stranded and fragmented capacity, at most once per
// CapacityEvery (the previous values hold in between).
func (c *KPICollector) sampleCapacity(at sim.Seconds) {
	t := at.Duration()
	if c.capAcc.computedOnce && c.opts.CapacityEvery > 0 && t-c.capAcc.lastComputed < c.opts.CapacityEvery {
		return
	}
	p := c.capacityPoint(at)
	c.capacity = append(c.capacity, p)
	c.capAcc.last, c.capAcc.has = p, true
	c.capAcc.stranded.set(int64(p.Stranded), c.clock)
	c.capAcc.frag.set(int64(p.Frag), c.clock)
	c.capAcc.lastComputed, c.capAcc.computedOnce = t, true
}

// capacityPoint refreshes the parts of the nodes changed since the last computation and,
// only when the shapes changed, brings every node up to date; then reads the totals.
func (c *KPICollector) capacityPoint(at sim.Seconds) CapacityPoint {
	tot := &c.capTot
	shapes, pending := c.fragShapes(), c.pending.shapes()
	newColumns := tot.addColumns(shapes)
	restrand := !slices.Equal(pending, tot.strandedFor)
	tot.strandedFor = pending
	for _, name := range c.nodes.stale {
		if e := c.nodes.byName[name]; e != nil && e.stale {
			tot.add(&e.cap, -1)
			e.cap = tot.partOf(e.rows, pending)
			tot.add(&e.cap, 1)
			e.stale = false
		}
	}
	c.nodes.stale = c.nodes.stale[:0]
	if newColumns || restrand {
		for _, name := range c.nodes.names {
			tot.catchUp(c.nodes.byName[name], pending, restrand)
		}
	}
	return CapacityPoint{T: at, Free: tot.free, FreeWhole: tot.whole, FreePieces: tot.pieces, Stranded: tot.stranded, Frag: tot.fragment(shapes)}
}

// freeParts is the rows' free capacity: all of it, on whole free GPUs, and the rest.
func freeParts(rows []sim.NodeState) (free, whole, pieces resources.MilliGPU) {
	for _, n := range rows {
		if !n.Ready {
			continue
		}
		for _, g := range n.GPUs {
			f := gpuFree(g)
			free += f
			mode := g.Mode
			if g.Allocated == 0 && g.Healthy && (mode == "exclusive" || mode == "fractional" || mode == "") {
				whole += f
			} else {
				pieces += f
			}
		}
	}
	return free, whole, pieces
}

// nodeFragments is the rows' summed FGD fragment for shape s.
func nodeFragments(rows []sim.NodeState, s GPUShape) int64 {
	var out int64
	for i := range rows {
		out += int64(nodeFragment(&rows[i], s))
	}
	return out
}

// fragShapes is the configured shape distribution, or the shapes seen pending so far.
func (c *KPICollector) fragShapes() []ShapeCount {
	if len(c.opts.Shapes) > 0 {
		return c.opts.Shapes
	}
	return sortShapes(c.seenShapes)
}
