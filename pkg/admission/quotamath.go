package admission

import (
	"math"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// apply adds (sign 1) or removes (sign -1) cells at ClusterQueue cq.
func (q *Quota) apply(cq nodeID, cells []cell, sign resources.Amount) {
	for _, c := range cells {
		q.addUsage(cq, c.fr, sign*c.amount)
	}
}

// addUsage changes a ClusterQueue's usage and propagates to its ancestors what the
// change does to the part each node takes from its parent (usage above its guaranteed
// quota), the way Kueue's hierarchical cohorts count usage.
func (q *Quota) addUsage(n nodeID, f frID, delta resources.Amount) {
	i := q.s.idx(n, f)
	old := q.usage[i]
	now := resources.SatAdd(old, delta)
	q.usage[i] = now
	for p := q.s.nodes[n].parent; p != noNode; n, p = p, q.s.nodes[p].parent {
		g := q.s.guaranteed[q.s.idx(n, f)]
		d := max(0, now-g) - max(0, old-g)
		if d == 0 {
			return
		}
		pi := q.s.idx(p, f)
		old = q.usage[pi]
		now = resources.SatAdd(old, d)
		q.usage[pi] = now
	}
}

// available is what node n may still use of f: its unused guaranteed quota plus what
// its parent can give, capped by its borrowing limit (Kueue's available()).
func (q *Quota) available(n nodeID, f frID) resources.Amount {
	s := q.s
	i := s.idx(n, f)
	parent := s.nodes[n].parent
	if parent == noNode {
		return s.subtree[i] - q.usage[i]
	}
	local := max(0, s.guaranteed[i]-q.usage[i])
	fromParent := q.available(parent, f)
	if bl := s.borrowLimit[i]; bl != noLimit {
		inParent := s.subtree[i] - s.guaranteed[i]
		usedInParent := max(0, q.usage[i]-s.guaranteed[i])
		fromParent = min(fromParent, inParent-usedInParent+bl)
	}
	return local + fromParent
}

// potential is the most node n could use of f with nothing else running anywhere.
func (q *Quota) potential(n nodeID, f frID) resources.Amount { return q.s.potential(n, f) }

func (s *structure) potential(n nodeID, f frID) resources.Amount {
	i := s.idx(n, f)
	parent := s.nodes[n].parent
	if parent == noNode {
		return s.subtree[i]
	}
	out := s.guaranteed[i] + s.potential(parent, f)
	if bl := s.borrowLimit[i]; bl != noLimit {
		out = min(out, resources.SatAdd(s.subtree[i], bl))
	}
	return out
}

// share computes the weighted DRS of node n with extra usage added at n. The lendable
// amounts are static (structure.lendable), so a share costs one pass per resource over
// the flavor-resource cells and allocates nothing.
func (q *Quota) share(n nodeID, extra []cell) int64 {
	s := q.s
	parent := s.nodes[n].parent
	if parent == noNode {
		return 0
	}
	var drs int64
	borrows := false
	for r := range s.resources {
		b := q.borrowedOf(n, r, extra)
		if b <= 0 {
			continue
		}
		borrows = true
		lendable := s.lendable[int(parent)*len(s.resources)+r]
		if lendable <= 0 {
			return math.MaxInt64
		}
		drs = max(drs, mulDiv(int64(b), 1000, int64(lendable)))
	}
	if !borrows {
		return 0
	}
	if s.nodes[n].weight == 0 {
		return math.MaxInt64 // weight 0: only what nobody else wants
	}
	return mulDiv(drs, 1000, s.nodes[n].weight)
}

// borrowedOf is what node n uses above its quota of resource index r, over all flavors,
// with extra usage added.
func (q *Quota) borrowedOf(n nodeID, r int, extra []cell) resources.Amount {
	s := q.s
	var out resources.Amount
	for f := range s.frs {
		if s.resOf[f] != r {
			continue
		}
		i := s.idx(n, frID(f))
		u := q.usage[i]
		for _, c := range extra {
			if c.fr == frID(f) {
				u = resources.SatAdd(u, c.amount)
			}
		}
		if b := u - s.subtree[i]; b > 0 {
			out = resources.SatAdd(out, b)
		}
	}
	return out
}
