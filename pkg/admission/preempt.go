package admission

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
)

// preemptionPossible reports whether cq may preempt at all; when it may not, a request
// that does not fit now is NoFit (WaitingForQuota) rather than Preempt.
func (q *Quota) preemptionPossible(cq nodeID) bool {
	n := q.s.nodes[cq]
	p := n.cq.Preemption
	if p.WithinClusterQueue.Enabled() {
		return true
	}
	if n.parent == noNode {
		return false
	}
	return p.ReclaimWithinCohort.Enabled()
}

// candidate is an admitted workload that preemption may take.
type candidate struct {
	w      *AdmittedWorkload
	reason VictimReason
	other  bool // in another ClusterQueue of the cohort tree
}

// FindVictims returns the smallest set of admitted workloads whose preemption lets wl
// fit under assignment a (mode Preempt), following Kueue: candidates in the same
// ClusterQueue by withinClusterQueue, in other ClusterQueues of the cohort tree by
// reclaimWithinCohort (only while they borrow) or borrowWithinCohort, or by the fair
// sharing strategies; tried lowest priority first, then most recently admitted, those
// in borrowing queues first; then any victim not needed is given back. The set is
// checked on a copy of the usage: after removing it, wl fits. protected (may be nil)
// excludes workloads the engine must not disrupt (minimum runtime, disruption budget).
// Nothing is preempted for a workload that would not fit anyway (mode NoFit).
func (q *Quota) FindVictims(wl *api.Workload, a Assignment, protected func(api.WorkloadID) bool) PreemptionResult {
	switch {
	case wl == nil:
		return PreemptionResult{Code: InvalidWorkload, Message: "nil workload"}
	case a.Mode >= Borrow:
		return PreemptionResult{Message: "fits without preemption"}
	case a.Mode == NoFit:
		return PreemptionResult{Code: a.Code, Message: "does not fit even with preemption: " + a.Why()}
	}
	cq, ok := q.s.cqID(a.ClusterQueue)
	if !ok {
		return PreemptionResult{Code: ClusterQueueMissing, Message: fmt.Sprintf("clusterqueue %q does not exist", a.ClusterQueue)}
	}
	cells, err := q.s.cells(a.Usage)
	if err != nil {
		return PreemptionResult{Code: InvalidWorkload, Message: err.Error()}
	}
	pr := &preemptor{q: q, wl: wl, cq: cq, cells: cells, need: map[frID]bool{}}
	for _, fr := range a.NeedsPreemption {
		pr.need[q.s.frIndex[fr]] = true
	}
	cands := pr.candidates(protected)
	var victims []candidate
	if q.s.fair.Enabled {
		victims = pr.fairSharing(cands)
	} else {
		victims = pr.classic(cands)
	}
	if len(victims) == 0 {
		return PreemptionResult{Code: WaitingForQuota, Message: fmt.Sprintf("no set of preemptible workloads (%d candidates) frees enough quota", len(cands))}
	}
	out := PreemptionResult{Code: WaitingForPreemption}
	for _, v := range victims {
		out.Victims = append(out.Victims, Victim{Workload: v.w.ID, ClusterQueue: v.w.ClusterQueue, Priority: v.w.Priority, Reason: v.reason})
	}
	out.Message = fmt.Sprintf("preempting %d workload(s) frees enough quota", len(out.Victims))
	return out
}

// preemptor carries one FindVictims call's state.
type preemptor struct {
	q     *Quota
	wl    *api.Workload
	cq    nodeID
	cells []cell
	need  map[frID]bool
}

// candidates lists admitted workloads that the policies allow as victims, in the order
// they are tried.
func (pr *preemptor) candidates(protected func(api.WorkloadID) bool) []candidate {
	s := pr.q.s
	p := s.nodes[pr.cq].cq.Preemption
	root := s.rootOf[pr.cq]
	self, pre := pr.wl.ID(), pr.wl.PriorityAge()
	var out []candidate
	// Map order does not matter: candidates are sorted below by keys that end in the
	// unique admission sequence number.
	pr.q.admitted.each(func(w *AdmittedWorkload) {
		// Cheap tests first: most admitted workloads are in other cohort trees.
		if w.cq != pr.cq && (s.nodes[pr.cq].parent == noNode || s.rootOf[w.cq] != root) {
			return
		}
		if w.ID == self || (protected != nil && protected(w.ID)) || !pr.usesNeeded(w) {
			return
		}
		if w.cq == pr.cq {
			if p.WithinClusterQueue.Allows(pre, w.priorityAge()) {
				out = append(out, candidate{w: w, reason: InClusterQueue})
			}
			return
		}
		if p.ReclaimWithinCohort.Allows(pre, w.priorityAge()) {
			out = append(out, candidate{w: w, reason: InCohortReclamation, other: true})
		}
	})
	if s.fair.Enabled {
		for i := range out {
			if out[i].other {
				out[i].reason = InCohortFairSharing
			}
		}
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if a.other != b.other {
			if a.other {
				return -1 // reclaim from borrowing queues first
			}
			return 1
		}
		if a.w.Priority != b.w.Priority {
			return cmp.Compare(a.w.Priority, b.w.Priority)
		}
		return cmp.Compare(b.w.Seq, a.w.Seq) // most recently admitted first
	})
	return out
}

// priorityAge is w's side of a preemption policy comparison.
func (w *AdmittedWorkload) priorityAge() api.PriorityAge {
	return api.PriorityAge{Priority: w.Priority, Created: w.Created}
}

// usesNeeded reports whether w uses a cell the preemptor is short of.
func (pr *preemptor) usesNeeded(w *AdmittedWorkload) bool {
	for _, c := range w.cells {
		if pr.need[c.fr] && c.amount > 0 {
			return true
		}
	}
	return false
}

// work is a usage-only copy of the quota for trying victim sets.
func (pr *preemptor) work() *Quota {
	return &Quota{s: pr.q.s, usage: append(pr.q.usage[:0:0], pr.q.usage...)}
}

// fits reports whether the preemptor fits in w, optionally without borrowing.
func (pr *preemptor) fits(w *Quota, allowBorrow bool) bool {
	for _, c := range pr.cells {
		if c.amount > w.available(pr.cq, c.fr) {
			return false
		}
		i := w.s.idx(pr.cq, c.fr)
		if !allowBorrow && w.usage[i]+c.amount > w.s.subtree[i] {
			return false
		}
	}
	return true
}

// borrowing reports whether ClusterQueue n uses more than its quota in a needed cell.
func (pr *preemptor) borrowing(w *Quota, n nodeID) bool {
	for f := range pr.need {
		i := w.s.idx(n, f)
		if w.usage[i] > w.s.subtree[i] {
			return true
		}
	}
	return false
}

// classic is Kueue's preemption without fair sharing. Reclaiming from other queues is
// tried first with the preemptor not borrowing afterwards, unless borrowWithinCohort
// allows it; then the preemptor's own queue alone, borrowing allowed.
func (pr *preemptor) classic(cands []candidate) []candidate {
	var same []candidate
	for _, c := range cands {
		if !c.other {
			same = append(same, c)
		}
	}
	if len(same) == len(cands) {
		return pr.minimal(cands, true)
	}
	bwc := pr.q.s.nodes[pr.cq].cq.Preemption.BorrowWithinCohort
	if bwc.Policy.Enabled() {
		var allowed []candidate
		for _, c := range cands {
			if !c.other || bwc.Allows(pr.wl.PriorityAge(), c.w.priorityAge()) {
				if c.other {
					c.reason = InCohortReclaimWhileBorrowing
				}
				allowed = append(allowed, c)
			}
		}
		if v := pr.minimal(allowed, true); len(v) > 0 && pr.victimsMustBorrow(v) {
			return v
		}
	}
	// Reclaiming without borrowing makes sense only while the queue is under its
	// nominal quota where it is short (as in Kueue).
	if pr.underNominal() {
		if v := pr.minimal(cands, false); len(v) > 0 {
			return v
		}
	}
	return pr.minimal(same, true)
}

// victimsMustBorrow guards borrowWithinCohort against ping-pong: every victim taken from
// another queue must be one its queue could only run again by borrowing, even after
// preempting what it may preempt inside its own queue; so it cannot reclaim its quota
// straight back from the (borrowing) preemptor, and borrowWithinCohort cannot help it
// either (it took the victim because the victim's priority is lower).
func (pr *preemptor) victimsMustBorrow(victims []candidate) bool {
	w := pr.work()
	taken := make(map[*AdmittedWorkload]bool, len(victims))
	for _, v := range victims {
		w.apply(v.w.cq, v.w.cells, -1)
		taken[v.w] = true
	}
	for _, v := range victims {
		if !v.other {
			continue
		}
		policy := pr.q.s.nodes[v.w.cq].cq.Preemption.WithinClusterQueue
		var yield []*AdmittedWorkload // what v could preempt in its own queue
		pr.q.admitted.each(func(o *AdmittedWorkload) {
			if o.cq == v.w.cq && !taken[o] && policy.Allows(v.w.priorityAge(), o.priorityAge()) {
				yield = append(yield, o)
			}
		})
		for _, o := range yield {
			w.apply(o.cq, o.cells, -1)
		}
		mustBorrow := w.wouldBorrow(v.w.cq, v.w.cells)
		for _, o := range yield {
			w.apply(o.cq, o.cells, 1)
		}
		if !mustBorrow {
			return false
		}
	}
	return true
}

// wouldBorrow reports whether adding cells to ClusterQueue n takes it above its quota in
// some cell.
func (q *Quota) wouldBorrow(n nodeID, cells []cell) bool {
	for _, c := range cells {
		i := q.s.idx(n, c.fr)
		if q.usage[i]+c.amount > q.s.subtree[i] {
			return true
		}
	}
	return false
}

// underNominal reports whether the preemptor's queue uses less than its quota in every
// cell it is short of.
func (pr *preemptor) underNominal() bool {
	s := pr.q.s
	for f := range pr.need {
		i := s.idx(pr.cq, f)
		if pr.q.usage[i] >= s.subtree[i] {
			return false
		}
	}
	return true
}

// minimal removes candidates in order until the preemptor fits, then gives back every
// victim (latest first) that is not needed. Candidates of other queues are skipped once
// their queue no longer borrows: reclaim takes only what was lent.
func (pr *preemptor) minimal(cands []candidate, allowBorrow bool) []candidate {
	w := pr.work()
	var victims []candidate
	for _, c := range cands {
		if c.other && !pr.borrowing(w, c.w.cq) {
			continue
		}
		w.apply(c.w.cq, c.w.cells, -1)
		victims = append(victims, c)
		if pr.fits(w, allowBorrow) {
			return pr.fillBack(w, victims, allowBorrow)
		}
	}
	return nil
}

// fillBack returns victims, except the last, that can stay while the preemptor still fits.
func (pr *preemptor) fillBack(w *Quota, victims []candidate, allowBorrow bool) []candidate {
	for i := len(victims) - 2; i >= 0; i-- {
		v := victims[i]
		w.apply(v.w.cq, v.w.cells, 1)
		if pr.fits(w, allowBorrow) {
			victims = append(victims[:i], victims[i+1:]...)
			continue
		}
		w.apply(v.w.cq, v.w.cells, -1)
	}
	return victims
}
