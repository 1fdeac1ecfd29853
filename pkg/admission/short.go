package admission

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Short reports, by a cheap bound, that Assign would answer NoFit for wl in cq now: cq
// cannot preempt, and some pod set requests more of a resource cq covers than every
// flavor cq lists for it has available, even at the fewest pods partial admission
// could admit (leastPods). False says nothing (ask Assign). The scheduler
// asks it before waking quota-parked workloads: after a finish most of them are still
// short, and this costs a few lookups where Assign rates every flavor.
func (q *Quota) Short(wl *api.Workload, cq string) bool {
	c := q.CompileShort(wl, cq)
	return q.ShortBy(&c)
}

// ShortCheck is Short's question for one ClusterQueue and one workload's requests with
// the names resolved to quota cells once, so that asking it again reads arrays only
// (the scheduler asks it for the same queue and shape thousands of times a cycle).
// Clones of a quota share its structure, so a check made on one serves them all.
type ShortCheck struct {
	s     *structure
	wl    *api.Workload // asked again from scratch on a quota of another structure
	cq    string
	node  nodeID
	never bool // Short is false whatever the usage (preemption possible, unknown queue)
	needs []shortNeed
}

// shortNeed is one pod set's total request of a covered resource, and the cells of
// the flavors its group lists for it.
type shortNeed struct {
	amount resources.Amount
	cells  []frID
}

// CompileShort resolves Short's question for wl in cq against q's structure.
func (q *Quota) CompileShort(wl *api.Workload, cq string) ShortCheck {
	c := ShortCheck{s: q.s, wl: wl, cq: cq}
	n, ok := q.s.cqID(cq)
	if !ok || wl == nil || q.preemptionPossible(n) {
		c.never = true
		return c
	}
	c.node = n
	cover := q.s.covered[n]
	for i := range wl.PodSets {
		ps := &wl.PodSets[i]
		for r, per := range ps.Requests {
			g, covered := cover[r]
			if !covered || per <= 0 || r == resources.GPUMilli || q.s.excluded(r) {
				continue // converted, uncovered or ignored: Assign knows
			}
			if need, ok := q.s.shortNeed(n, g, r, resources.SatMul(per, int64(leastPods(ps)))); ok {
				c.needs = append(c.needs, need)
			}
		}
	}
	return c
}

// shortNeed resolves the cells of group g's flavors for r; false when a flavor lacks
// the cell (Assign rates it, so the need never makes the workload short).
func (s *structure) shortNeed(n nodeID, g int, r resources.Name, amount resources.Amount) (shortNeed, bool) {
	need := shortNeed{amount: amount}
	for _, fq := range s.nodes[n].cq.ResourceGroups[g].Flavors {
		f, ok := s.frIndex[FlavorResource{fq.Name, r}]
		if !ok {
			return shortNeed{}, false
		}
		need.cells = append(need.cells, f)
	}
	return need, true
}

// ShortBy answers a compiled Short question on q's usage now.
func (q *Quota) ShortBy(c *ShortCheck) bool {
	if c.s != q.s {
		return q.Short(c.wl, c.cq)
	}
	if c.never {
		return false
	}
	for _, need := range c.needs {
		if !q.offers(c.node, need) {
			return true
		}
	}
	return false
}

// Compiled reports whether c was resolved against q's structure (else ShortBy resolves
// it again on every call).
func (q *Quota) Compiled(c *ShortCheck) bool { return c != nil && c.s == q.s }

// offers reports whether some flavor listed for the need has its amount available now
// (Assign's rating is Preempt or worse for every flavor otherwise).
func (q *Quota) offers(n nodeID, need shortNeed) bool {
	for _, f := range need.cells {
		if q.available(n, f) >= need.amount {
			return true
		}
	}
	return false
}
