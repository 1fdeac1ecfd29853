package engine

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Park says why a pending workload is parked as inadmissible, and so which changes
// can help it. Parked workloads are left out of the cycle's input until such a change
// wakes them: a cycle never re-runs a failure that nothing has changed (no polling).
type Park int

const (
	NotParked Park = iota
	// ParkedQuota: admission refused it. Quota freed in its cohort tree or a quota
	// change can help (not nodes: admission does not look at them).
	ParkedQuota
	// ParkedNodes: quota fits but the nodes do not (or reservations block it). Capacity
	// freed anywhere, nodes added or returned, or a quota change (the fallback flavor
	// may have been refused by quota) can help.
	ParkedNodes
	// ParkedHead: a StrictFIFO follower behind a parked head; it wakes with its queue.
	ParkedHead
	// ParkedQueue: its queue does not resolve or a stop policy holds it; only a change
	// of the queue objects helps.
	ParkedQueue
	// ParkedReserved: the nodes refused it in a cycle that made reservations. Those
	// hold GPUs only against workloads ordered after them, and the order and who gets
	// one of the reservation slots move with every change, so any change at all wakes
	// it (every cycle a driver runs after an event); a cycle in which nothing changed
	// (World.Unchanged) leaves it parked.
	ParkedReserved
	// ParkedBackoff: evicted by a failure, it waits out its requeue backoff (backoff.go);
	// only time wakes it.
	ParkedBackoff
	// ParkedLimit: evicted by more failures than the requeue limit; only a change of
	// the workload (a new submission) brings it back.
	ParkedLimit
)

// String says what wakes a parked workload, for explain.
func (k Park) String() string {
	switch k {
	case ParkedQuota:
		return "quota is freed in its cohort tree or quotas change"
	case ParkedNodes:
		return "GPUs are freed, nodes are added or return, a reservation ends, or quotas change"
	case ParkedHead:
		return "the head of its StrictFIFO ClusterQueue is retried"
	case ParkedQueue:
		return "its LocalQueue, ClusterQueue or their stop policy change"
	case ParkedReserved:
		return "anything changes (reservations ahead of it hold GPUs; the order moves with every change)"
	case ParkedBackoff:
		return "its requeue backoff after a failure is over"
	case ParkedLimit:
		return "the workload changes (it failed more often than the requeue limit)"
	}
	return "-"
}

// park records the plan's rejections as parked workloads. Rejections that a later cycle
// must see again without any event stay active: NotTried (attempt cap), waiting for
// noticed victims, and failed commits.
//
// When the cycle made reservations, placement rejections park as ParkedReserved: the
// GPUs a reservation holds are held only for workloads ordered after it, and the order
// moves with every ClusterQueue's share (any admission or finish anywhere), as does who
// gets one of the limited reservation slots, so any change wakes them.
//
// rejected holds the entry of each of p.Rejections, in the same order (nil: unknown).
func (s *Scheduler) park(p plan.Plan, rejected []*entry) {
	if s.retryAll {
		return
	}
	holds := len(p.Reservations) > 0
	// follow: the park kind the followers of each StrictFIFO ClusterQueue's blocking
	// head take: active with an active (or reserved) head, parked behind reservations
	// with a head parked that way, else ParkedHead (the default).
	follow := map[string]Park{}
	for _, r := range p.Reservations {
		if e := s.wls[r.Workload]; e != nil {
			follow[e.res.ClusterQueue] = NotParked
		}
	}
	for i, r := range p.Rejections {
		e := rejected[i]
		if e == nil || e.phase != phasePending {
			continue
		}
		k := parkFor(r)
		if k == ParkedNodes && holds {
			k = ParkedReserved
		}
		if stoppedByHold(r) && e.cq.preempts {
			k = NotParked // an admission may turn its answer into a preemption (holds.go)
		}
		if k == ParkedHead {
			continue
		}
		s.setPark(e, k)
		if f, seen := follow[e.res.ClusterQueue]; (k == NotParked || k == ParkedReserved) && (!seen || f == ParkedReserved) {
			follow[e.res.ClusterQueue] = k
		}
	}
	for i, r := range p.Rejections {
		if e := rejected[i]; e != nil && e.phase == phasePending && parkFor(r) == ParkedHead {
			k, ok := follow[e.res.ClusterQueue]
			if !ok {
				k = ParkedHead
			}
			s.setPark(e, k)
		}
	}
}

// parkFor maps a rejection to what may help it.
func parkFor(r plan.Rejection) Park {
	switch r.Reason {
	case plan.ReasonNotTried, plan.ReasonWaitingForPreemption, plan.ReasonHeldForPreemptor, plan.ReasonAdmitFailed,
		plan.ReasonQuotaHeldInCycle: // held out by a preemptor waiting in this cycle
		return NotParked
	case plan.ReasonBlockedByHead:
		return ParkedHead
	case plan.ReasonQueueMissing, plan.ReasonClusterQueueMissing, plan.ReasonNamespaceNotSelected, plan.ReasonQueueHeld:
		return ParkedQueue
	}
	if r.Layer == plan.LayerAdmission {
		return ParkedQuota
	}
	return ParkedNodes
}

// wakeAll wakes every parked workload (quota change, disruption budget window over).
func (s *Scheduler) wakeAll() {
	for _, k := range []Park{ParkedQuota, ParkedNodes, ParkedHead, ParkedQueue} {
		s.wakeSet(s.parked.byKind[k], nil)
	}
}

// wakeForNodes wakes the workloads the nodes refused: capacity came back.
func (s *Scheduler) wakeForNodes() {
	s.wakeSet(s.parked.byKind[ParkedNodes], nil)
}

// capacityFreed records what a workload leaving ClusterQueue cq may help: quota in its
// cohort tree and GPUs on its nodes; the wakes run at the next cycle (wakeForCapacity).
func (s *Scheduler) capacityFreed(cq string) {
	s.freed = true
	if s.freedRoots == nil {
		s.freedRoots = map[string]bool{}
	}
	s.freedRoots[s.rootOf(cq)] = true
}

// admittedWakes handles the one case where an admission helps others: with preemption
// on, a newly running (or newly unprotected) workload is a new possible victim for
// parked workloads of its cohort tree that may preempt it (by their queues' policies
// and priorities). One pass over the workloads for all victims.
func (s *Scheduler) admittedWakes(victims ...*entry) {
	if len(victims) == 0 {
		return
	}
	s.wakeFlavorChoices(victims)
	if !s.eng.cfg.Preemption {
		return
	}
	byRoot := map[string]map[string][]*entry{} // root -> ClusterQueue -> new victims
	counts := map[string]int{}
	for _, v := range victims {
		if byRoot[v.root] == nil {
			byRoot[v.root] = map[string][]*entry{}
		}
		byRoot[v.root][v.res.ClusterQueue] = append(byRoot[v.root][v.res.ClusterQueue], v)
		counts[v.root]++
	}
	s.wakeNodePreemptors(victims)
	for root, byCQ := range byRoot {
		total := counts[root]
		s.wakeSet(s.parked.preemptors[root], func(e *entry) bool {
			if e.park == ParkedHead || e.park == ParkedQueue {
				return false
			}
			if e.park == ParkedNodes && e.cq.preempts {
				// Quota fit by borrowing; an admission in its tree may have used up what
				// it could borrow, so its answer may now be to preempt in its own queue.
				return true
			}
			return s.mayPreempt(e, byCQ[e.res.ClusterQueue], total)
		})
	}
}

// wakeFlavorChoices wakes the node-parked workloads of the newcomers' cohort trees whose
// ClusterQueue chooses among several flavors: admission picks flavors by usage, so an
// admission may move a refused gang to flavors whose nodes can hold it. So it may move a
// quota-parked one where the choice weighs preemption (choosesByPreemption).
func (s *Scheduler) wakeFlavorChoices(newcomers []*entry) {
	if !s.flavorChoices {
		return
	}
	roots := map[string]bool{}
	for _, v := range newcomers {
		roots[v.root] = true
	}
	for _, root := range slices.Sorted(maps.Keys(roots)) {
		s.wakeSet(s.parked.byRoot[root], func(e *entry) bool {
			return (e.park == ParkedNodes && e.cq.flavorChoice) || (e.park == ParkedQuota && choosesByPreemption(e))
		})
	}
}

// wakeNodePreemptors wakes the node-parked workloads that may preempt on the nodes
// (placement's victims cross queues and cohorts) and are not below the newcomers'
// lowest priority: a newcomer may be a victim that makes room for them. (A
// lower-priority preemptor admitted first, its victims having left, is one.)
func (s *Scheduler) wakeNodePreemptors(victims []*entry) {
	if !s.nodePreemptors {
		return
	}
	lowest := victims[0].w.Priority
	for _, v := range victims[1:] {
		lowest = min(lowest, v.w.Priority)
	}
	s.wakeSet(s.parked.byKind[ParkedNodes], func(e *entry) bool {
		return e.w.Priority >= lowest && e.nodePreempts
	})
}

// mayPreempt reads the preemptor's ClusterQueue policy through the one rule admission
// and placement use (api.PreemptionPolicy): could the admission of newcomers (same: those
// of its own ClusterQueue; total: all of its cohort tree) let it preempt? In its own
// queue only a newcomer itself is a new candidate, by priority. Across queues a newcomer
// may make its queue borrow, and then any workload of that queue can be reclaimed: so
// any enabled reclaim or borrow policy wakes (the random worlds of
// TestParkingKeepsDecisionsProperty found a reclaim against an older workload).
func (s *Scheduler) mayPreempt(pre *entry, same []*entry, total int) bool {
	p := pre.cq.policy
	if total > len(same) && (p.ReclaimWithinCohort.Enabled() || p.BorrowWithinCohort.Policy.Enabled()) {
		return true
	}
	for _, v := range same {
		if p.WithinClusterQueue.Allows(pre.w.PriorityAge(), v.w.PriorityAge()) {
			return true
		}
	}
	return false
}

// preempts reports whether a ClusterQueue with policy p may preempt at all.
func preempts(p api.Preemption) bool {
	return p.WithinClusterQueue.Enabled() || p.ReclaimWithinCohort.Enabled() || p.BorrowWithinCohort.Policy.Enabled()
}

// rootOf is the root of ClusterQueue cq's cohort tree ("cq:" + its name when it has no
// cohort): quota freed anywhere in a tree can be borrowed anywhere in it.
func (s *Scheduler) rootOf(cq string) string {
	if r, ok := s.roots[cq]; ok {
		return r
	}
	return "cq:" + cq
}

// arrived handles a submission: in a StrictFIFO queue with a parked head the newcomer
// may sort before it or must wait behind it, so the queue is woken and ordered again.
func (s *Scheduler) arrived(e *entry) {
	if e.cq.strategy != api.StrictFIFO {
		return
	}
	s.wakeQueue(e.res.ClusterQueue)
}

// wakeStrictQueues wakes the parked workloads of every StrictFIFO ClusterQueue with an
// active one: its head may be among the parked, and a follower must never be tried
// without it (an attempt cap leaves followers active and untried while the head parks).
func (s *Scheduler) wakeStrictQueues() {
	var cqs []string
	seen := map[string]bool{}
	for _, e := range s.active.entries() {
		cq := e.res.ClusterQueue
		if e.cq.strategy == api.StrictFIFO && !seen[cq] && s.parked.byCQ[cq].Len() > 0 {
			seen[cq] = true
			cqs = append(cqs, cq)
		}
	}
	sort.Strings(cqs)
	for _, cq := range cqs {
		s.wakeQueue(cq)
	}
}

// timedWakes handles what only time changes, with preemption on: a running workload
// past its minimum runtime becomes a possible victim, and a preemption older than its
// queue's disruption-budget window stops counting against the budget. Both are
// checked for the span since the last cycle, so no timer events are needed.
func (s *Scheduler) timedWakes(w World) {
	if !s.eng.cfg.Preemption || !s.cycled {
		return
	}
	// Inclusive at both ends: a wake at the boundary instant itself may come too early
	// for the layer's own comparison, so the next cycle wakes again (waking is idempotent).
	from, to := s.lastCycleAt, w.Now
	within := func(t time.Time) bool { return !t.Before(from) && !t.After(to) }
	var unprotected []*entry
	for _, e := range s.protected.entries() {
		if within(e.startedAt.Add(e.w.MinRuntime)) {
			unprotected = append(unprotected, e)
		}
	}
	s.admittedWakes(unprotected...)
	expired := false
	for _, h := range s.history {
		if cq, ok := s.resolver.ClusterQueue(h.Queue); ok && cq.DisruptionBudget.Window > 0 && within(h.At.Add(cq.DisruptionBudget.Window)) {
			expired = true
			break
		}
	}
	s.pruneHistory(to) // after the check: a window ending right now still wakes
	if expired {
		s.wakeAll()
	}
}

// pruneHistory drops preemptions older than the longest disruption-budget window:
// they no longer count against any budget, and keeping them made every cycle walk
// every preemption ever made.
func (s *Scheduler) pruneHistory(now time.Time) {
	if s.keepHistory {
		return
	}
	cut := 0
	for cut < len(s.history) && !s.history[cut].At.Add(s.maxWindow).After(now) {
		cut++
	}
	if cut > 0 {
		s.history = append(s.history[:0:0], s.history[cut:]...)
	}
}
