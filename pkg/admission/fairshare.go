package admission

// fairSharing is preemption under fair sharing, as Kueue runs it (fairPreemptions): the
// preemptor's usage is added first, so shares are those after its admission; then,
// while it does not fit, a tournament down the cohort tree (fairOrder) picks the
// ClusterQueue to take from: the child with the highest share at each level. The
// preemptor's own queue gives up its candidates by withinClusterQueue; another queue
// gives up one if the strategy allows it, comparing the shares of the two subtrees
// just below their lowest common cohort (or unconditionally while the preemptor stays
// within its nominal quota: that is reclaiming, not fair sharing). Candidates a first
// strategy refused get one more chance under LessThanInitialShare, one per queue.
//
// No cycles. Shares depend only on a queue's own usage (the lendable amount is fixed by
// the quotas), so the checks below can be reasoned about queue by queue. Say the
// preemptor p of queue P ends with victims taken from queues V, and write s(X) for
// queue X's share in the final state (p admitted, victims gone). For victim v of V to
// take p back right away, either strategy needs V's share with v admitted to be at most
// P's share before losing p: s(V+v) ≤ s(P). Gantry accepts a victim set only if
// s(V+v) > s(P) for every victim taken from another queue (stable), so a victim can
// never preempt its preemptor back; TestNoPreemptionCycles checks it. Kueue applies
// the strategy alone; this stability check is a deliberate difference.
func (pr *preemptor) fairSharing(cands []candidate) []candidate {
	strategies := pr.q.s.fair.Strategies
	if len(strategies) == 0 {
		return nil
	}
	w := pr.work()
	w.apply(pr.cq, pr.cells, 1) // shares as they would be with the preemptor admitted
	var kept []candidate
	for _, c := range cands {
		// Kueue looks only at queues borrowing what the preemptor is short of.
		if !c.other || pr.borrowing(w, c.w.cq) {
			kept = append(kept, c)
		}
	}
	fits, victims, retry := pr.fairFirst(w, kept, strategies[0])
	if !fits && len(strategies) > 1 {
		fits, victims = pr.fairSecond(w, retry, victims)
	}
	if !fits {
		return nil
	}
	w.apply(pr.cq, pr.cells, -1)
	victims = pr.fillBack(w, victims, true)
	if !pr.stable(w, victims) {
		return nil
	}
	return victims
}

// fitsFair reports whether the preemptor fits in w, which holds its usage already.
func (pr *preemptor) fitsFair(w *Quota) bool {
	w.apply(pr.cq, pr.cells, -1)
	ok := pr.fits(w, true)
	w.apply(pr.cq, pr.cells, 1)
	return ok
}

// fairFirst is Kueue's runFirstFsStrategy: victims in tournament order until the
// preemptor fits; it returns the candidates the strategy refused.
func (pr *preemptor) fairFirst(w *Quota, cands []candidate, st FairStrategy) (bool, []candidate, []candidate) {
	o := newFairOrder(pr, w, cands)
	withinNominal := !pr.borrowing(w, pr.cq)
	var victims, retry []candidate
	for {
		target, ok := o.next()
		if !ok {
			return false, victims, retry
		}
		if target == pr.cq || withinNominal {
			c := o.pop(target)
			if target != pr.cq {
				c.reason = InCohortReclamation
			}
			w.apply(c.w.cq, c.w.cells, -1)
			victims = append(victims, c)
			if pr.fitsFair(w) {
				return true, victims, nil
			}
			continue
		}
		preShare, targetOld := o.shares(target)
		for o.has(target) {
			c := o.pop(target)
			w.apply(c.w.cq, c.w.cells, -1)
			_, targetNew := o.shares(target)
			if !strategyAllows(st, preShare, targetOld, targetNew) {
				w.apply(c.w.cq, c.w.cells, 1)
				retry = append(retry, c)
				continue
			}
			victims = append(victims, c)
			if pr.fitsFair(w) {
				return true, victims, nil
			}
			break // shares changed: pick the target again
		}
	}
}

// fairSecond is Kueue's runSecondFsStrategy (rule S2-b): over the refused candidates,
// each queue in tournament order may give up its first one if the preemptor's share
// stays below the queue's current share.
func (pr *preemptor) fairSecond(w *Quota, retry, victims []candidate) (bool, []candidate) {
	o := newFairOrder(pr, w, retry)
	for {
		target, ok := o.next()
		if !ok {
			return false, victims
		}
		preShare, targetOld := o.shares(target)
		c := o.pop(target)
		if strategyAllows(LessThanInitialShare, preShare, targetOld, 0) {
			w.apply(c.w.cq, c.w.cells, -1)
			victims = append(victims, c)
			if pr.fitsFair(w) {
				return true, victims
			}
		}
		o.drop(target)
	}
}

// strategyAllows applies a fair-sharing strategy to the preemptor's share after
// admission and the target's share before and after losing the candidate.
func strategyAllows(st FairStrategy, preemptor, targetOld, targetNew int64) bool {
	if st == LessThanInitialShare {
		return preemptor < targetOld
	}
	return preemptor <= targetNew
}

// stable reports whether no victim taken by fair sharing could preempt the preemptor
// back: in the final state w (victims removed, preemptor not yet added), the subtree of
// each such victim's queue just below the lowest cohort it shares with the preemptor's
// queue must, with the victim back, have a larger share than the preemptor's subtree
// there with the preemptor admitted. Those are the two shares either strategy would
// compare for the victim (symmetric to the preemptor's own check). Victims reclaimed
// while the preemptor stays within its nominal quota need no check: their queue could
// only take quota back from a queue that borrows it.
func (pr *preemptor) stable(w *Quota, victims []candidate) bool {
	for _, v := range victims {
		if v.reason != InCohortFairSharing {
			continue
		}
		mine, theirs := w.s.almostLCAs(pr.cq, v.w.cq)
		w.apply(pr.cq, pr.cells, 1)
		final := w.share(mine, nil)
		w.apply(pr.cq, pr.cells, -1)
		w.apply(v.w.cq, v.w.cells, 1)
		back := w.share(theirs, nil)
		w.apply(v.w.cq, v.w.cells, -1)
		if back <= final {
			return false
		}
	}
	return true
}
