package admission

import "sort"

// fairSharing is preemption under fair sharing. While the preemptor does not fit, the
// ClusterQueue of the cohort tree with the highest share that still has candidates gives
// up its next candidate if the strategy allows it; otherwise that queue is left alone.
// Candidates of the preemptor's own queue are used last, under withinClusterQueue.
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
	for _, st := range pr.q.s.fair.Strategies {
		if v := pr.fairWith(st, cands); len(v) > 0 {
			return v
		}
	}
	return nil
}

func (pr *preemptor) fairWith(st FairStrategy, cands []candidate) []candidate {
	w := pr.work()
	byCQ := map[nodeID][]candidate{}
	var same []candidate
	for _, c := range cands {
		if c.other {
			byCQ[c.w.cq] = append(byCQ[c.w.cq], c)
		} else {
			same = append(same, c)
		}
	}
	var victims []candidate
	for !pr.fits(w, true) {
		target, ok := pr.highestShare(w, byCQ)
		if !ok {
			break
		}
		c := byCQ[target][0]
		byCQ[target] = byCQ[target][1:]
		if !pr.borrowing(w, target) || !pr.shareAllows(w, st, c) {
			delete(byCQ, target) // the queue keeps its workloads
			continue
		}
		w.apply(c.w.cq, c.w.cells, -1)
		victims = append(victims, c)
	}
	for _, c := range same {
		if pr.fits(w, true) {
			break
		}
		w.apply(c.w.cq, c.w.cells, -1)
		victims = append(victims, c)
	}
	if !pr.fits(w, true) {
		return nil
	}
	victims = pr.fillBack(w, victims, true)
	if !pr.stable(w, victims) {
		return nil
	}
	return victims
}

// stable reports whether no victim from another queue could preempt the preemptor back:
// in the final state w (victims removed, preemptor not yet added), each victim's queue
// with the victim back must have a larger share than the preemptor's queue.
func (pr *preemptor) stable(w *Quota, victims []candidate) bool {
	final := w.share(pr.cq, pr.cells)
	for _, v := range victims {
		if !v.other {
			continue
		}
		w.apply(v.w.cq, v.w.cells, 1)
		back := w.share(v.w.cq, nil)
		w.apply(v.w.cq, v.w.cells, -1)
		if back <= final {
			return false
		}
	}
	return true
}

// highestShare picks the queue with candidates left and the largest current share
// (ties: the lower node id, i.e. the name first in order).
func (pr *preemptor) highestShare(w *Quota, byCQ map[nodeID][]candidate) (nodeID, bool) {
	ids := make([]nodeID, 0, len(byCQ))
	for id, cs := range byCQ {
		if len(cs) > 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, false
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	best, bestShare := ids[0], w.share(ids[0], nil)
	for _, id := range ids[1:] {
		if s := w.share(id, nil); s > bestShare {
			best, bestShare = id, s
		}
	}
	return best, true
}

// shareAllows applies strategy st to taking candidate c.
func (pr *preemptor) shareAllows(w *Quota, st FairStrategy, c candidate) bool {
	after := w.share(pr.cq, pr.cells)
	targetBefore := w.share(c.w.cq, nil)
	switch st {
	case LessThanInitialShare:
		return after < targetBefore
	default:
		w.apply(c.w.cq, c.w.cells, -1)
		targetAfter := w.share(c.w.cq, nil)
		w.apply(c.w.cq, c.w.cells, 1)
		return after <= targetAfter
	}
}
