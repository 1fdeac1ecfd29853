package admission

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// QuickHeadRank is HeadRank of w's assignment in ClusterQueue cq without asking Assign
// for it, where the flavors are forced: every resource w requests is covered by a group
// that lists one flavor, and the total of each fits what cq has available of it now.
// Assign could then only choose those flavors (Fit or Borrow), or refuse w for its node
// labels, and a refused workload's place in the order changes nothing (a workload short
// in a queue that cannot preempt, which Assign refuses, is ranked as Kueue ranks it:
// Preempt without candidates, at its borrowing level). A
// queue without a cohort has the zero rank. ok is false when Assign must be asked
// (several flavors, GPU requests converted to gantry.dev/gpu-milli, an uncovered
// resource, a cell short where the queue may preempt).
func (q *Quota) QuickHeadRank(w *api.Workload, cq string) (HeadRank, bool) {
	c := q.CompileRank(cq)
	return q.QuickHeadRankBy(&c, RequestTotals(w))
}

// Totals are a workload's requests summed over its pod sets (pods × per pod), by
// resource: all QuickHeadRank reads of a workload, the same for every workload of a
// shape (ranking a cycle's workloads reads each shape's requests once, not each queue's
// workloads').
type Totals struct {
	amounts []resourceTotal
	valid   bool
}

type resourceTotal struct {
	r      resources.Name
	amount resources.Amount
}

// RequestTotals sums w's positive requests (a request at zero is no request, as Assign
// reads it).
func RequestTotals(w *api.Workload) Totals {
	if w == nil {
		return Totals{}
	}
	t := Totals{valid: true}
	for i := range w.PodSets {
		ps := &w.PodSets[i]
		for r, per := range ps.Requests {
			if per > 0 {
				t.add(r, resources.SatMul(per, int64(ps.Count)))
			}
		}
	}
	return t
}

func (t *Totals) add(r resources.Name, amount resources.Amount) {
	for i := range t.amounts {
		if t.amounts[i].r == r {
			t.amounts[i].amount = resources.SatAdd(t.amounts[i].amount, amount)
			return
		}
	}
	t.amounts = append(t.amounts, resourceTotal{r, amount})
}

// RankCheck is QuickHeadRank's question for one ClusterQueue with the names resolved
// once: the scheduler ranks every pending workload each cycle, and this leaves a few
// comparisons per requested resource where Assign rates every flavor and explains it.
// It resolves each resource when first asked (a check is one caller's, not shared).
type RankCheck struct {
	s       *structure
	cq      string
	node    nodeID
	cover   map[resources.Name]int // the queue's covered resources, by group
	known   bool                   // a ClusterQueue of this structure
	cohort  bool
	milli   bool // GPU requests are converted to gantry.dev/gpu-milli: Assign decides
	preempt bool // the queue may preempt: a short cell needs Assign
	// resolved are the resources asked so far with their one cell (forced false: the
	// resource's group lists several flavors, or none covers it; skip: excluded):
	// the first few in place (a check is made per queue each cycle), more in extra.
	resolved [3]forcedCell
	nres     int
	extra    []forcedCell
}

// forcedCell is a resource and the one cell its group offers.
type forcedCell struct {
	r            resources.Name
	f            frID
	forced, skip bool
}

// InCohort reports whether the ClusterQueue belongs to a cohort: only then can its
// workloads' ranks differ from the zero rank.
func (c *RankCheck) InCohort() bool { return c.cohort }

// CompileRank resolves QuickHeadRank's question for cq against q's structure.
func (q *Quota) CompileRank(cq string) RankCheck {
	c := RankCheck{s: q.s, cq: cq}
	n, ok := q.s.cqID(cq)
	if !ok {
		return c
	}
	c.cover = q.s.covered[n]
	_, c.milli = c.cover[resources.GPUMilli]
	c.node, c.known, c.cohort, c.preempt = n, true, q.s.nodes[n].parent != noNode, q.preemptionPossible(n)
	return c
}

// resolve is r's one cell in the queue, resolved on first use.
func (c *RankCheck) resolve(r resources.Name) forcedCell {
	for _, fc := range c.resolved[:c.nres] {
		if fc.r == r {
			return fc
		}
	}
	for _, fc := range c.extra {
		if fc.r == r {
			return fc
		}
	}
	fc := forcedCell{r: r, skip: c.s.excluded(r)}
	if g, covered := c.cover[r]; covered && !fc.skip {
		flavors := c.s.nodes[c.node].cq.ResourceGroups[g].Flavors
		if len(flavors) == 1 {
			fc.f, fc.forced = c.s.frIndex[FlavorResource{flavors[0].Name, r}]
		}
	}
	if c.nres < len(c.resolved) {
		c.resolved[c.nres] = fc
		c.nres++
	} else {
		c.extra = append(c.extra, fc)
	}
	return fc
}

// QuickHeadRankBy answers a compiled QuickHeadRank question for a workload with
// request totals t, on q's usage now.
func (q *Quota) QuickHeadRankBy(c *RankCheck, t Totals) (HeadRank, bool) {
	switch {
	case c.s != q.s:
		cc := q.CompileRank(c.cq)
		return q.QuickHeadRankBy(&cc, t)
	case !c.known || !t.valid:
		return HeadRank{}, false
	case !c.cohort:
		return HeadRank{}, true
	case c.milli:
		return HeadRank{}, false
	}
	var buf [8]cell
	cells, ok := c.cells(t, buf[:0])
	if !ok {
		return HeadRank{}, false
	}
	for _, cl := range cells {
		if cl.amount > q.available(c.node, cl.fr) {
			// Short in its only flavor: Assign answers Preempt (ask it), or NoFit where
			// the queue cannot preempt. There Kueue rates the head Preempt without
			// candidates where it may look for victims at all, and ranks it as it
			// ranks a fitting one (below); elsewhere the refusal's place changes nothing.
			if c.preempt {
				return HeadRank{}, false
			}
			if !q.mayPreemptFor(c.node, cl.fr, cl.amount) {
				return HeadRank{}, true
			}
		}
	}
	if q.s.fair.Enabled {
		return HeadRank{Standings: q.standings(c.node, cells)}, true
	}
	return HeadRank{Level: q.borrowingLevel(nil, c.node, cells, nil)}, true
}

// cells are t's amounts in their forced cells (appended to buf); false when a resource
// has no forced flavor (Assign sorts that out).
func (c *RankCheck) cells(t Totals, buf []cell) ([]cell, bool) {
	for _, rt := range t.amounts {
		switch fc := c.resolve(rt.r); {
		case fc.skip:
		case !fc.forced:
			return nil, false
		default:
			buf = append(buf, cell{fc.f, rt.amount})
		}
	}
	return buf, true
}
