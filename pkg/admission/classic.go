package admission

import (
	"cmp"
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// variant is how classic preemption may take a candidate (Kueue's preemptionVariant).
type variant int8

const (
	// withinCQ: a workload of the preemptor's own queue, by withinClusterQueue.
	withinCQ variant = iota
	// hierarchicalReclaim: the candidate uses quota of a subtree the preemptor's
	// request fits in, so the preemptor has the better claim whatever the priorities.
	hierarchicalReclaim
	// reclaimWithoutBorrowing: taken only if the preemptor then does not borrow.
	reclaimWithoutBorrowing
	// reclaimWhileBorrowing: borrowWithinCohort lets a borrowing preemptor take it.
	reclaimWhileBorrowing
)

func (v variant) reason() VictimReason {
	switch v {
	case withinCQ:
		return InClusterQueue
	case reclaimWhileBorrowing:
		return InCohortReclaimWhileBorrowing
	}
	return InCohortReclamation
}

// classic is Kueue's preemption without fair sharing, over hierarchical cohorts
// (Kueue's classicalPreemptions and candidate iterator). Candidates come in three
// lists, each lowest priority first and then most recently admitted first: those over
// which the preemptor has a hierarchical advantage, those it may take by priority from
// other queues of the tree, and those of its own queue. One or two passes are made,
// allowing the preemptor to borrow or not; a pass removes valid candidates in order
// until the preemptor fits, then gives back those not needed.
//
// Gantry adds one guard (docs/admission.md): a set that takes a workload by
// borrowWithinCohort is kept only if that workload's queue could not run it again
// without borrowing, so it cannot reclaim its quota straight back.
func (pr *preemptor) classic(same, hier, prio []candidate) []candidate {
	all := slices.Concat(hier, prio, same)
	bwcForbidden := !pr.q.s.nodes[pr.cq].cq.Preemption.BorrowWithinCohort.Policy.Enabled()
	var passes []bool // allowBorrow per pass
	switch {
	case len(hier) == 0 && len(prio) == 0, bwcForbidden && !pr.underNominal():
		passes = []bool{true}
	case bwcForbidden && len(hier) == 0:
		passes = []bool{false, true}
	default:
		passes = []bool{true, false}
	}
	for _, borrow := range passes {
		if v := pr.classicPass(all, borrow); len(v) > 0 {
			return v
		}
	}
	return nil
}

// classicPass removes valid candidates in order until the preemptor fits (borrowing
// allowed or not), then gives back every victim not needed.
func (pr *preemptor) classicPass(all []candidate, allowBorrow bool) []candidate {
	w := pr.work()
	var victims []candidate
	for _, c := range all {
		if !pr.validCandidate(w, c, allowBorrow) {
			continue
		}
		w.apply(c.w.cq, c.w.cells, -1)
		victims = append(victims, c)
		if pr.fits(w, allowBorrow) {
			victims = pr.fillBack(w, victims, allowBorrow)
			if !pr.victimsMustBorrow(victims) {
				return nil
			}
			return victims
		}
	}
	return nil
}

// validCandidate is Kueue's candidateIsValid: a workload of another queue is worth
// taking only while its queue, and every cohort between it and the subtree where its
// quota was found, uses more than its quota in a cell the preemptor is short of
// (earlier victims may have brought them back within it).
func (pr *preemptor) validCandidate(w *Quota, c candidate, allowBorrow bool) bool {
	if c.variant == withinCQ {
		return true
	}
	if allowBorrow && c.variant == reclaimWithoutBorrowing {
		return false
	}
	for n := c.w.cq; n != c.lca && n != noNode; n = w.s.nodes[n].parent {
		if !pr.borrowing(w, n) { // within its (subtree) quota: Kueue's IsWithinNominalInResources
			return false
		}
	}
	return true
}

// classicCandidates lists the candidates of classic preemption: of the preemptor's own
// queue, and of other queues of its cohort tree, found walking up from its parent (Kueue's
// collectCandidatesForHierarchicalReclaim): at each cohort, the queues below it that use
// more than their quota, skipping subtrees within quota and the subtree already visited.
// Once the request fits in a subtree's quota, candidates found from there up are
// hierarchical ones; before that they are taken by priority.
func (pr *preemptor) classicCandidates(protected func(api.WorkloadID) bool) (same, hier, prio []candidate) {
	s := pr.q.s
	p := s.nodes[pr.cq].cq.Preemption
	byCQ := pr.admittedByCQ(protected)
	if p.WithinClusterQueue.Enabled() {
		for _, w := range byCQ[pr.cq] {
			if p.WithinClusterQueue.Allows(pr.wl.PriorityAge(), w.priorityAge()) {
				same = append(same, candidate{w: w, reason: InClusterQueue, variant: withinCQ, lca: noNode})
			}
		}
	}
	parent := s.nodes[pr.cq].parent
	if parent != noNode && p.ReclaimWithinCohort.Enabled() {
		adv, remaining := pr.fitsInQuota(pr.cq, pr.cellAmounts())
		prev := noNode
		for cur := parent; cur != noNode; cur = s.nodes[cur].parent {
			list := &prio
			if adv {
				list = &hier
			}
			pr.collectSubtree(cur, cur, prev, adv, byCQ, list)
			var fits bool
			fits, remaining = pr.fitsInQuota(cur, remaining)
			adv = adv || fits
			prev = cur
		}
	}
	for _, l := range [][]candidate{same, hier, prio} {
		slices.SortFunc(l, func(a, b candidate) int {
			if a.w.Priority != b.w.Priority {
				return cmp.Compare(a.w.Priority, b.w.Priority)
			}
			return cmp.Compare(b.w.Seq, a.w.Seq) // most recently admitted first
		})
	}
	return same, hier, prio
}

// admittedByCQ groups the admitted workloads of the preemptor's cohort tree that use a
// cell it is short of, by ClusterQueue (the preemptor itself and protected ones left out).
func (pr *preemptor) admittedByCQ(protected func(api.WorkloadID) bool) map[nodeID][]*AdmittedWorkload {
	s := pr.q.s
	self := pr.wl.ID()
	out := map[nodeID][]*AdmittedWorkload{}
	for _, cq := range s.treeCQs[s.rootOf[pr.cq]] {
		for _, w := range pr.q.admittedIn(cq) {
			if w.ID == self || (protected != nil && protected(w.ID)) || !pr.usesNeeded(w) {
				continue
			}
			out[cq] = append(out[cq], w)
		}
	}
	return out
}

// collectSubtree adds the candidates of the queues under cur that use more than their
// quota, descending only into cohorts that do, and skipping subtree skip.
func (pr *preemptor) collectSubtree(cur, lca, skip nodeID, adv bool, byCQ map[nodeID][]*AdmittedWorkload, list *[]candidate) {
	s := pr.q.s
	for _, c := range s.nodes[cur].children {
		if c == skip || c == pr.cq || !pr.borrowing(pr.q, c) {
			continue
		}
		if !s.nodes[c].isCQ {
			pr.collectSubtree(c, lca, skip, adv, byCQ, list)
			continue
		}
		for _, w := range byCQ[c] {
			if v, ok := pr.classify(w, adv); ok {
				*list = append(*list, candidate{w: w, reason: v.reason(), other: true, variant: v, lca: lca})
			}
		}
	}
}

// classify is Kueue's classifyPreemptionVariant for a workload of another queue.
func (pr *preemptor) classify(w *AdmittedWorkload, adv bool) (variant, bool) {
	p := pr.q.s.nodes[pr.cq].cq.Preemption
	pre := pr.wl.PriorityAge()
	switch {
	case !p.ReclaimWithinCohort.Allows(pre, w.priorityAge()):
		return 0, false
	case adv:
		return hierarchicalReclaim, true
	case p.BorrowWithinCohort.Policy.Enabled() && p.BorrowWithinCohort.Allows(pre, w.priorityAge()):
		return reclaimWhileBorrowing, true
	}
	return reclaimWithoutBorrowing, true
}

// cellAmounts is the preemptor's request per cell.
func (pr *preemptor) cellAmounts() map[frID]resources.Amount {
	out := make(map[frID]resources.Amount, len(pr.cells))
	for _, c := range pr.cells {
		out[c.fr] += c.amount
	}
	return out
}

// fitsInQuota is Kueue's QuantitiesFitInQuota: whether node n's quota holds its usage
// plus the requests, and what of the requests is left once n's unused guaranteed
// quota is taken.
func (pr *preemptor) fitsInQuota(n nodeID, req map[frID]resources.Amount) (bool, map[frID]resources.Amount) {
	s := pr.q.s
	fits := true
	rest := make(map[frID]resources.Amount, len(req))
	for f, v := range req {
		i := s.idx(n, f)
		if resources.SatAdd(pr.q.usage[i], v) > s.subtree[i] {
			fits = false
		}
		rest[f] = max(0, v-pr.q.localAvailable(n, f))
	}
	return fits, rest
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

// victimsMustBorrow guards borrowWithinCohort against ping-pong: every victim taken by
// it must be one its queue could only run again by borrowing, even after preempting
// what it may preempt inside its own queue; so it cannot reclaim its quota straight
// back from the (borrowing) preemptor, and borrowWithinCohort cannot help it either (it
// was taken because its priority is lower).
func (pr *preemptor) victimsMustBorrow(victims []candidate) bool {
	w := pr.work()
	taken := make(map[*AdmittedWorkload]bool, len(victims))
	for _, v := range victims {
		w.apply(v.w.cq, v.w.cells, -1)
		taken[v.w] = true
	}
	for _, v := range victims {
		if v.variant != reclaimWhileBorrowing {
			continue
		}
		policy := pr.q.s.nodes[v.w.cq].cq.Preemption.WithinClusterQueue
		var yield []*AdmittedWorkload // what v could preempt in its own queue
		for _, o := range pr.q.admittedIn(v.w.cq) {
			if !taken[o] && policy.Allows(v.w.priorityAge(), o.priorityAge()) {
				yield = append(yield, o)
			}
		}
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
