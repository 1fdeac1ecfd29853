package admission

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// HeadRank is where Kueue's scheduling cycle tries a workload, given its flavor
// assignment, among the heads of the other ClusterQueues of its cohort tree
// (kubernetes-sigs/kueue pkg/scheduler: classicalIterator and fairSharingIterator):
// before priority, a head whose quota comes from nearer goes first. The zero value is
// the best rank: a ClusterQueue without a cohort, which borrows from no one.
type HeadRank struct {
	// Level is the assignment's borrowing level without fair sharing (Kueue's
	// Assignment.Borrows()): 0 when every flavor-resource it uses fits in the
	// ClusterQueue's own quota, else the height of the lowest cohort whose subtree
	// holds it, for a cell that needs preemption once the victims a preemption
	// search finds for it alone are gone.
	Level int
	// Standings are, under fair sharing, the workload's standing in Kueue's
	// tournament at each cohort on its ClusterQueue's path, from the root down: the
	// standing of the cohort's child on the path (a cohort, or the ClusterQueue at
	// the last) with the workload admitted.
	Standings []Standing
}

// Standing is one node's standing at its parent cohort with a workload admitted:
// first whether it then borrows from the parent on a flavor-resource the workload uses
// (Kueue's FairSharingPrioritizeNonBorrowing, on by default), then its dominant
// resource share. The zero value is the best standing.
type Standing struct {
	Borrows bool
	Share   DRS
}

// DRS is a dominant resource share kept exactly, as a fraction: the dominant
// resource's amount above the node's quota over what the parent could lend of it,
// and the node's fair-sharing weight in thousandths. Kueue compares these as floats;
// the fractions compare exactly (CompareDRS). The zero value borrows nothing.
type DRS struct {
	borrowed, lendable resources.Amount
	weight             int64
}

// IsZero reports whether the share is 0 (nothing borrowed of a resource the parent
// could lend).
func (d DRS) IsZero() bool { return d.borrowed == 0 }

// zeroWeightBorrows is Kueue's DRS.zeroWeightBorrows: a weight-0 node that borrows
// ranks after every node with a weight.
func (d DRS) zeroWeightBorrows() bool { return d.weight == 0 && !d.IsZero() }

// CompareDRS is Kueue's CompareDRS on exact fractions: -1 when a is the lower share
// (preferred for admission). Two borrowing weight-0 shares compare unweighted; one
// ranks after any other.
func CompareDRS(a, b DRS) int {
	switch za, zb := a.zeroWeightBorrows(), b.zeroWeightBorrows(); {
	case za && zb:
		return compareFractions(a.borrowed, a.lendable, 1, b.borrowed, b.lendable, 1)
	case za:
		return 1
	case zb:
		return -1
	case a.IsZero() || b.IsZero():
		return compareBools(!a.IsZero(), !b.IsZero())
	}
	return compareFractions(a.borrowed, a.lendable, a.weight, b.borrowed, b.lendable, b.weight)
}

// Compare orders standings: not borrowing on the workload's flavor-resources first,
// then the lower share.
func (s Standing) Compare(o Standing) int {
	if s.Borrows != o.Borrows {
		return compareBools(s.Borrows, o.Borrows)
	}
	return CompareDRS(s.Share, o.Share)
}

// CompareHeadRanks orders two ranks, -1 when a goes first: the standings from the root
// down (a missing level counts as the zero standing: the workloads' trees or depths
// differ, where Kueue's order is arbitrary), then the borrowing level.
func CompareHeadRanks(a, b HeadRank) int {
	for i := range max(len(a.Standings), len(b.Standings)) {
		var sa, sb Standing
		if i < len(a.Standings) {
			sa = a.Standings[i]
		}
		if i < len(b.Standings) {
			sb = b.Standings[i]
		}
		if c := sa.Compare(sb); c != 0 {
			return c
		}
	}
	switch {
	case a.Level < b.Level:
		return -1
	case a.Level > b.Level:
		return 1
	}
	return 0
}

// HeadRank ranks a fitting or preempting assignment of w against the usage now (the
// caller asks before the cycle admits anything, as Kueue nominates its heads against
// the cycle's snapshot). Under fair sharing it gives the standings, otherwise the
// borrowing level. An assignment in a ClusterQueue without a cohort, or one whose usage
// names an unknown flavor-resource, gets the zero rank.
func (q *Quota) HeadRank(w *api.Workload, a Assignment) HeadRank {
	n, ok := q.s.cqID(a.ClusterQueue)
	if !ok || q.s.nodes[n].parent == noNode {
		return HeadRank{}
	}
	cells, err := q.s.cells(a.Usage)
	if err != nil {
		return HeadRank{}
	}
	if q.s.fair.Enabled {
		return HeadRank{Standings: q.standings(n, cells)}
	}
	return HeadRank{Level: q.borrowingLevel(w, n, cells, a.NeedsPreemption)}
}

// borrowingLevel is Kueue's Assignment.Borrows(): the largest borrowing level of the
// cells, each rated as Kueue's flavor assigner does (FindHeightOfLowestSubtreeThatFits
// for a cell that fits, the preemption oracle's level after its victims for one that
// needs preemption). A pod set's cell is rated on the workload's usage of it so far,
// so the last pod set using it, at the total, gives the largest level.
func (q *Quota) borrowingLevel(w *api.Workload, cq nodeID, cells []cell, short []FlavorResource) int {
	level := 0
	for _, c := range cells {
		var l int
		if w != nil && slices.Contains(short, q.s.frs[c.fr]) {
			l = q.simulatePreemption(w, cq, c.fr, c.amount).level
		} else {
			l, _ = q.lowestFit(cq, c.fr, c.amount)
		}
		level = max(level, l)
	}
	return level
}

// standings are the standings of ClusterQueue cq's path with cells admitted in it, from
// the root down (Kueue's entryComparer.computeDRS: the share of each node below a
// cohort, the ClusterQueue first, with the workload's usage added and carried up as
// addUsage carries it).
func (q *Quota) standings(cq nodeID, cells []cell) []Standing {
	s := q.s
	delta := make([]resources.Amount, len(cells))
	for i, c := range cells {
		delta[i] = c.amount
	}
	var out []Standing
	for n := cq; s.nodes[n].parent != noNode; n = s.nodes[n].parent {
		out = append(out, q.standingWith(n, cells, delta))
		for i, c := range cells {
			j := s.idx(n, c.fr)
			g, old := s.guaranteed[j], q.usage[j]
			delta[i] = max(0, resources.SatAdd(old, delta[i])-g) - max(0, old-g)
		}
	}
	slices.Reverse(out)
	return out
}

// standingWith is node n's standing at its parent with delta[i] more of cells[i].fr:
// whether it then borrows on a cell the workload uses, and its dominant resource share
// (Kueue's dominantResourceShare: per resource, the amounts above quota summed over
// flavors, over what the parent could lend of it; resources it cannot lend are left
// out).
func (q *Quota) standingWith(n nodeID, cells []cell, delta []resources.Amount) Standing {
	s := q.s
	borrowed := make([]resources.Amount, len(s.resources))
	var st Standing
	for f := range s.frs {
		i := s.idx(n, frID(f))
		u := q.usage[i]
		used := false
		for k, c := range cells {
			if c.fr == frID(f) {
				u = resources.SatAdd(u, delta[k])
				used = used || c.amount > 0
			}
		}
		if b := u - s.subtree[i]; b > 0 {
			borrowed[s.resOf[f]] = resources.SatAdd(borrowed[s.resOf[f]], b)
			st.Borrows = st.Borrows || used
		}
	}
	parent := s.nodes[n].parent
	st.Share.weight = s.nodes[n].weight
	for r, b := range borrowed {
		l := s.lendable[int(parent)*len(s.resources)+r]
		if b <= 0 || l <= 0 {
			continue
		}
		if st.Share.IsZero() || compareFractions(b, l, 1, st.Share.borrowed, st.Share.lendable, 1) > 0 {
			st.Share.borrowed, st.Share.lendable = b, l
		}
	}
	return st
}
