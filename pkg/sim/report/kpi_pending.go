package report

import (
	"cmp"
	"slices"

	"github.com/gantry-sched/gantry/pkg/sim"
)

// pendingSet is the pending pod sets' GPU shapes: per workload, for resolving it, and
// counted per shape, for the distinct shapes stranded capacity is measured against.
type pendingSet struct {
	by    map[string][]GPUShape // workload -> its pending pod sets' shapes (GPU ones)
	count map[GPUShape]int
}

func newPendingSet() pendingSet {
	return pendingSet{by: map[string][]GPUShape{}, count: map[GPUShape]int{}}
}

// add takes in newly pending pod sets.
func (p *pendingSet) add(ps []sim.PendingShape) {
	for _, x := range ps {
		list := p.by[x.Workload]
		if sh, ok := ShapeOf(x.PerPod); ok {
			list = append(list, sh)
			p.count[sh]++
		}
		if list == nil {
			list = []GPUShape{} // pending without a GPU shape: known, nothing to count
		}
		p.by[x.Workload] = list
	}
}

// resolve drops workloads that are no longer pending.
func (p *pendingSet) resolve(workloads []string) {
	for _, w := range workloads {
		for _, sh := range p.by[w] {
			if p.count[sh]--; p.count[sh] == 0 {
				delete(p.count, sh)
			}
		}
		delete(p.by, w)
	}
}

// shapes are the distinct pending shapes, sorted.
func (p *pendingSet) shapes() []GPUShape {
	out := make([]GPUShape, 0, len(p.count))
	for sh := range p.count {
		out = append(out, sh)
	}
	slices.SortFunc(out, compareShapes)
	return out
}

func compareShapes(a, b GPUShape) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.GPUs, b.GPUs), cmp.Compare(a.Milli, b.Milli), cmp.Compare(a.Profile, b.Profile))
}

// pendingKey is one pending pod set's shape, counted once for FGD's distribution.
type pendingKey struct {
	workload string
	shape    GPUShape
}

// learnShapes adds the shapes of newly pending pod sets to the distribution used when
// no workload distribution was configured; a pod set counts once, however often it
// becomes pending again.
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
