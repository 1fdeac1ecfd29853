package admission

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// fitKind refines Mode for choosing among the flavors of a resource group, the way
// Kueue's flavor assigner does: a flavor that needs preemption is worth more when the
// preemption only reclaims quota other ClusterQueues borrow than when it takes
// workloads of the preemptor's own queue, and worth least when no workload could be
// preempted at all. The order matters: larger is better.
type fitKind int8

const (
	kindNoFit fitKind = iota
	// kindNoCandidates: short, and a preemption simulation found no victims.
	kindNoCandidates
	// kindPreempt: fits after preempting, some victims in the preemptor's own queue.
	kindPreempt
	// kindReclaim: fits after preempting only workloads of other (borrowing) queues.
	kindReclaim
	// kindFit: fits now (Mode Fit or Borrow).
	kindFit
)

// rank is one flavor's (or one resource's) standing: its kind and how far up the cohort
// tree the quota comes from (0: the ClusterQueue's own quota; Kueue's borrowing level).
type rank struct {
	kind  fitKind
	level int
}

var bestRank = rank{kind: kindFit}

// preferred reports whether a is better than b (Kueue's isPreferred): any viable kind
// beats NoFit and a flavor with preemption candidates beats one without; then, under
// BorrowingOverPreemption (the default), the better kind and then the lower borrowing
// level, and under PreemptionOverBorrowing the lower level and then the better kind.
func preferred(a, b rank, pref api.FungibilityPreference) bool {
	switch {
	case a.kind == kindNoFit:
		return false
	case b.kind == kindNoFit:
		return true
	case (a.kind == kindNoCandidates) != (b.kind == kindNoCandidates):
		return b.kind == kindNoCandidates
	case pref == api.PreemptionOverBorrowing && a.level != b.level:
		return a.level < b.level
	case a.kind != b.kind:
		return a.kind > b.kind
	}
	return a.level < b.level
}

// worse returns the worse of two ranks (a resource group's flavor is only as good as
// its worst resource, by the same order as preferred).
func worse(a, b rank, pref api.FungibilityPreference) rank {
	if preferred(a, b, pref) {
		return b
	}
	return a
}

// tryNext applies flavorFungibility (Kueue's shouldTryNextFlavor): a flavor that does
// not fit or has no preemption candidates never ends the search; one that needs
// preemption ends it only under whenCanPreempt MayStopSearch; one that borrows (also
// while preempting) ends it unless whenCanBorrow is TryNextFlavor.
func tryNext(r rank, f api.FlavorFungibility) bool {
	switch {
	case r.kind == kindNoFit || r.kind == kindNoCandidates:
		return true
	case (r.kind == kindPreempt || r.kind == kindReclaim) && f.WhenCanPreempt != api.MayStopSearch:
		return true
	}
	return r.level > 0 && f.WhenCanBorrow == api.TryNextFlavor
}

// localAvailable is node n's unused guaranteed quota of f: the part its parent never sees.
func (q *Quota) localAvailable(n nodeID, f frID) resources.Amount {
	i := q.s.idx(n, f)
	return max(0, q.s.guaranteed[i]-q.usage[i])
}

// lowestFit is Kueue's FindHeightOfLowestSubtreeThatFits: the height of the lowest
// subtree, walking up from ClusterQueue cq, whose quota holds amount more of f (0 when
// cq's own quota does; the whole tree's height when none does), and whether that
// subtree is below the root (so quota above it could still be reclaimed).
func (q *Quota) lowestFit(cq nodeID, f frID, amount resources.Amount) (int, bool) {
	s := q.s
	parent := s.nodes[cq].parent
	i := s.idx(cq, f)
	if parent == noNode || resources.SatAdd(q.usage[i], amount) <= s.subtree[i] {
		return 0, parent != noNode
	}
	remaining := amount - q.localAvailable(cq, f)
	for n := parent; n != noNode; n = s.nodes[n].parent {
		if resources.SatAdd(q.usage[s.idx(n, f)], remaining) <= s.subtree[s.idx(n, f)] {
			return s.height[n], s.nodes[n].parent != noNode
		}
		remaining -= q.localAvailable(n, f)
	}
	return s.height[s.rootOf[cq]], false
}

// mayPreemptFor is Kueue's condition for looking for victims at all when amount of f
// is short: the request is within cq's nominal quota (its own workloads could make
// room), or it fits below the root of the cohort tree (quota there can be reclaimed),
// or cq may preempt while borrowing (borrowWithinCohort, or fair sharing with
// reclaimWithinCohort).
func (q *Quota) mayPreemptFor(cq nodeID, f frID, amount resources.Amount) bool {
	if amount <= q.s.nominal[q.s.idx(cq, f)] {
		return true
	}
	if _, belowRoot := q.lowestFit(cq, f, amount); belowRoot {
		return true
	}
	p := q.s.nodes[cq].cq.Preemption
	return p.BorrowWithinCohort.Policy.Enabled() || (q.s.fair.Enabled && p.ReclaimWithinCohort.Enabled())
}

// simulatePreemption is Kueue's preemption oracle for one short cell: it runs the
// preemption search for amount of f alone and says whether it finds victims, whether
// any is in cq itself, and the borrowing level once they are gone.
func (q *Quota) simulatePreemption(wl *api.Workload, cq nodeID, f frID, amount resources.Amount) rank {
	pr := &preemptor{q: q, wl: wl, cq: cq, cells: []cell{{f, amount}}, need: map[frID]bool{f: true}}
	victims, _ := pr.search(nil)
	if len(victims) == 0 {
		level, _ := q.lowestFit(cq, f, amount)
		return rank{kind: kindNoCandidates, level: level}
	}
	w := pr.work()
	kind := kindReclaim
	for _, v := range victims {
		w.apply(v.w.cq, v.w.cells, -1)
		if !v.other {
			kind = kindPreempt
		}
	}
	level, _ := w.lowestFit(cq, f, amount)
	return rank{kind: kind, level: level}
}
