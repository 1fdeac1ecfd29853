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
	// variant and lca are set by classic preemption (classic.go): how the candidate
	// may be taken and the cohort below which its quota was found.
	variant variant
	lca     nodeID
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
	victims, n := pr.search(protected)
	if len(victims) == 0 {
		return PreemptionResult{Code: WaitingForQuota, Message: fmt.Sprintf("no set of preemptible workloads (%d candidates) frees enough quota", n)}
	}
	out := PreemptionResult{Code: WaitingForPreemption}
	for _, v := range victims {
		out.Victims = append(out.Victims, Victim{Workload: v.w.ID, ClusterQueue: v.w.ClusterQueue, Priority: v.w.Priority, Reason: v.reason})
	}
	out.Message = fmt.Sprintf("preempting %d workload(s) frees enough quota", len(out.Victims))
	return out
}

// search runs fair-sharing or classic preemption and returns the victims and how many
// candidates there were.
func (pr *preemptor) search(protected func(api.WorkloadID) bool) ([]candidate, int) {
	if pr.q.s.fair.Enabled {
		cands := pr.candidates(protected)
		return pr.fairSharing(cands), len(cands)
	}
	same, hier, prio := pr.classicCandidates(protected)
	return pr.classic(same, hier, prio), len(same) + len(hier) + len(prio)
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
	queues := []nodeID{pr.cq}
	if s.nodes[pr.cq].parent != noNode {
		queues = s.treeCQs[root]
	}
	// Order does not matter: candidates are sorted below by keys that end in the
	// unique admission sequence number.
	for _, cq := range queues {
		for _, w := range pr.q.admittedIn(cq) {
			if w.ID == self || (protected != nil && protected(w.ID)) || !pr.usesNeeded(w) {
				continue
			}
			if w.cq == pr.cq {
				if p.WithinClusterQueue.Allows(pre, w.priorityAge()) {
					out = append(out, candidate{w: w, reason: InClusterQueue})
				}
				continue
			}
			if p.ReclaimWithinCohort.Allows(pre, w.priorityAge()) {
				out = append(out, candidate{w: w, reason: InCohortReclamation, other: true})
			}
		}
	}
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
