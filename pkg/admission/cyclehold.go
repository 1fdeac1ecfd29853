package admission

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// In-cycle holds: quota a scheduling cycle sets aside for heads that are not admitted
// in it, the way Kueue's scheduler adds usage to its cycle snapshot. The engine keeps
// the holds; these answer its questions about them and change nothing.

// FitsAfter reports whether a fits once the admitted workloads in gone have left and
// the usage of held (preemptors of this cycle, not admitted) is counted. It is Kueue's
// check of every head after a preemption was issued in the cycle: a later preemptor
// (or a head that fits) is skipped when the quota its victims free is already spoken
// for. q is left as it was; unknown IDs in gone and assignments naming an unknown
// ClusterQueue are ignored (nothing of theirs is counted).
func (q *Quota) FitsAfter(a Assignment, held []Assignment, gone []api.WorkloadID) bool {
	cq, ok := q.s.cqID(a.ClusterQueue)
	if !ok {
		return false
	}
	cells, err := q.s.cells(a.Usage)
	if err != nil {
		return false
	}
	var undo []func()
	defer func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}()
	seen := make(map[api.WorkloadID]bool, len(gone))
	for _, id := range gone {
		rec, ok := q.admitted.get(id)
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		q.apply(rec.cq, rec.cells, -1)
		undo = append(undo, func() { q.apply(rec.cq, rec.cells, 1) })
	}
	for _, h := range held {
		hcq, ok := q.s.cqID(h.ClusterQueue)
		hcells, err := q.s.cells(h.Usage)
		if !ok || err != nil {
			continue
		}
		q.apply(hcq, hcells, 1)
		undo = append(undo, func() { q.apply(hcq, hcells, -1) })
	}
	for _, c := range cells {
		if c.amount > q.available(cq, c.fr) {
			return false
		}
	}
	return true
}

// Unreclaimable is the quota Kueue sets aside for a head of ClusterQueue cq that needs
// preemption but found no victims, when cq cannot always reclaim what it lends
// (reclaimWithinCohort is not Any): without it, a workload of another ClusterQueue
// could borrow that quota in the same cycle and cq might never get it back. A head
// that must borrow holds its whole request up to cq's borrowing limit; one that would
// not holds what is left of cq's nominal quota, up to its request. It is nil when cq can
// always reclaim or has no cohort.
func (q *Quota) Unreclaimable(a Assignment) []FlavorAmount {
	cq, ok := q.s.cqID(a.ClusterQueue)
	if !ok || !q.mayHold(cq) {
		return nil
	}
	cells, err := q.s.cells(a.Usage)
	if err != nil {
		return nil
	}
	borrows := false
	for _, c := range cells {
		i := q.s.idx(cq, c.fr)
		if resources.SatAdd(q.usage[i], c.amount) > q.s.nominal[i] {
			borrows = true
		}
	}
	var out []FlavorAmount
	for k, c := range cells {
		i := q.s.idx(cq, c.fr)
		var hold resources.Amount
		switch {
		case !borrows:
			hold = max(0, min(c.amount, q.s.nominal[i]-q.usage[i]))
		case q.s.borrowLimit[i] == noLimit:
			hold = c.amount
		default:
			hold = max(0, min(c.amount, q.s.nominal[i]+q.s.borrowLimit[i]-q.usage[i]))
		}
		if hold > 0 {
			out = append(out, FlavorAmount{FlavorResource: a.Usage[k].FlavorResource, Amount: hold})
		}
	}
	return out
}

// MayHold reports whether ClusterQueue cq may hold quota in a cycle for a head without
// victims (Unreclaimable): it lends in a cohort and cannot always reclaim.
func (q *Quota) MayHold(cq string) bool {
	n, ok := q.s.cqID(cq)
	return ok && q.mayHold(n)
}

func (q *Quota) mayHold(n nodeID) bool {
	return q.s.nodes[n].parent != noNode && q.s.nodes[n].cq.Preemption.ReclaimWithinCohort != api.PreemptAny
}

// WithHeld is a copy of q that counts the usages held as used by their ClusterQueues,
// without admitted workloads to carry them: a cycle checks its heads against it many
// times (FitsHeld) and adds what it admits (Hold). Usages naming an unknown queue or
// cell are left out.
func (q *Quota) WithHeld(held []Assignment) *Quota {
	out := q.Clone()
	for _, h := range held {
		out.Hold(h.ClusterQueue, h.Usage, 1)
	}
	return out
}

// Hold adds (sign 1) or takes back (sign -1) usage at ClusterQueue cq with no admitted
// workload recording it (a WithHeld copy).
func (q *Quota) Hold(cq string, usage []FlavorAmount, sign resources.Amount) {
	n, ok := q.s.cqID(cq)
	if !ok {
		return
	}
	if cells, err := q.s.cells(usage); err == nil {
		q.apply(n, cells, sign)
	}
}

// FitsHeld reports whether a fits in q (a WithHeld copy) once own, a hold of a's own
// ClusterQueue that does not count against it, is given back, the usages in extra are
// counted and the admitted workloads in gone have left. q is left as it was.
func (q *Quota) FitsHeld(a Assignment, own []FlavorAmount, extra []Assignment, gone []api.WorkloadID) bool {
	if len(own) > 0 {
		q.Hold(a.ClusterQueue, own, -1)
		defer q.Hold(a.ClusterQueue, own, 1)
	}
	return q.FitsAfter(a, extra, gone)
}
