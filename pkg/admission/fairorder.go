package admission

// fairOrder is Kueue's TargetClusterQueueOrdering: which ClusterQueue gives up the next
// candidate under fair sharing. From the root of the preemptor's cohort tree it goes
// down to the child with the highest share (a cohort's share is that of its whole
// subtree) until it reaches a ClusterQueue. Queues and cohorts that borrow nothing are
// pruned (except the preemptor's own queue and its ancestors, where preemption inside
// the queue may still be needed), and so are queues without candidates left.
type fairOrder struct {
	pr     *preemptor
	w      *Quota // usage with the preemptor admitted and victims so far removed
	cands  map[nodeID][]candidate
	pruned map[nodeID]bool
	onPath map[nodeID]bool // the preemptor's ancestors
}

func newFairOrder(pr *preemptor, w *Quota, cands []candidate) *fairOrder {
	o := &fairOrder{pr: pr, w: w, cands: map[nodeID][]candidate{}, pruned: map[nodeID]bool{}, onPath: map[nodeID]bool{}}
	for _, c := range cands {
		o.cands[c.w.cq] = append(o.cands[c.w.cq], c)
	}
	for n := w.s.nodes[pr.cq].parent; n != noNode; n = w.s.nodes[n].parent {
		o.onPath[n] = true
	}
	return o
}

func (o *fairOrder) has(cq nodeID) bool { return len(o.cands[cq]) > 0 }

// pop takes the next candidate of queue cq (the caller checked has).
func (o *fairOrder) pop(cq nodeID) candidate {
	c := o.cands[cq][0]
	o.cands[cq] = o.cands[cq][1:]
	return c
}

// drop stops offering queue cq's candidates.
func (o *fairOrder) drop(cq nodeID) { o.pruned[cq] = true }

// next returns the queue to take from next, false when none is left.
func (o *fairOrder) next() (nodeID, bool) {
	s := o.w.s
	if s.nodes[o.pr.cq].parent == noNode {
		return o.pr.cq, !o.pruned[o.pr.cq] && o.has(o.pr.cq)
	}
	root := s.rootOf[o.pr.cq]
	for !o.pruned[root] {
		if t, ok := o.nextUnder(root); ok {
			return t, true
		}
	}
	return 0, false
}

// nextUnder picks the child of cohort c with the highest share (cohorts win ties with
// queues, a queue whose first candidate comes first in candidate order wins ties with
// queues) and descends; it prunes c and reports false when no child is left.
func (o *fairOrder) nextUnder(c nodeID) (nodeID, bool) {
	s := o.w.s
	bestCQ, bestCohort := noNode, noNode
	cqShare, cohortShare := int64(-1), int64(-1)
	for _, ch := range s.nodes[c].children {
		if o.pruned[ch] {
			continue
		}
		share, borrows := o.w.share(ch, nil), o.w.borrowsAny(ch)
		if !s.nodes[ch].isCQ {
			if !borrows && !o.onPath[ch] {
				o.pruned[ch] = true
			} else if share >= cohortShare {
				bestCohort, cohortShare = ch, share
			}
			continue
		}
		switch {
		case (!borrows && ch != o.pr.cq) || !o.has(ch):
			o.pruned[ch] = true
		case share > cqShare || (share == cqShare && candidateBefore(o.cands[ch][0], o.cands[bestCQ][0])):
			bestCQ, cqShare = ch, share
		}
	}
	switch {
	case bestCQ == noNode && bestCohort == noNode:
		o.pruned[c] = true
		return 0, false
	case bestCohort != noNode && cohortShare >= cqShare:
		return o.nextUnder(bestCohort)
	}
	return bestCQ, true
}

// candidateBefore is Kueue's candidate order: other queues first, lower priority first,
// then the most recently admitted.
func candidateBefore(a, b candidate) bool {
	if a.other != b.other {
		return a.other
	}
	if a.w.Priority != b.w.Priority {
		return a.w.Priority < b.w.Priority
	}
	return a.w.Seq > b.w.Seq
}

// shares returns the shares fair sharing compares for a target queue: those of the
// preemptor's and the target's subtrees just below their lowest common cohort (the
// queues themselves when they share a parent).
func (o *fairOrder) shares(target nodeID) (int64, int64) {
	a, b := o.w.s.almostLCAs(o.pr.cq, target)
	return o.w.share(a, nil), o.w.share(b, nil)
}

// almostLCAs returns the ancestors (or selves) of a and b that are children of their
// lowest common ancestor.
func (s *structure) almostLCAs(a, b nodeID) (nodeID, nodeID) {
	pa, pb := s.pathToRoot(a), s.pathToRoot(b)
	i, j := len(pa)-1, len(pb)-1
	if pa[i] != pb[j] {
		return a, b // different trees
	}
	for i > 0 && j > 0 && pa[i-1] == pb[j-1] {
		i, j = i-1, j-1
	}
	if i == 0 || j == 0 {
		return a, b // the same node, or one contains the other
	}
	return pa[i-1], pb[j-1]
}

// pathToRoot lists n and its ancestors, n first.
func (s *structure) pathToRoot(n nodeID) []nodeID {
	var out []nodeID
	for ; n != noNode; n = s.nodes[n].parent {
		out = append(out, n)
	}
	return out
}

// borrowsAny reports whether node n uses more than its quota of any resource.
func (q *Quota) borrowsAny(n nodeID) bool {
	for r := range q.s.resources {
		if q.borrowedOf(n, r, nil) > 0 {
			return true
		}
	}
	return false
}
