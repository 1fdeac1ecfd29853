package engine

import (
	"maps"
	"slices"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Kueue's in-cycle quota holds, part of its scheduling cycle (HeadOrderKueue). Kueue
// adds usage to its cycle snapshot for heads it does not admit:
//   - a preemptor's request, once its preemptions are issued;
//   - for the head of a ClusterQueue that cannot always reclaim what it lends
//     (reclaimWithinCohort not Any), when it needs preemption and has no victims, the
//     queue's quota it would use, so that no other queue borrows it in the meantime.
//
// A later head (a fitting one, or another preemptor) must fit with the holds counted
// and the preemptors' victims gone, or it is skipped. Flavors and victims are chosen
// without the holds, as Kueue chooses them before its cycle admits anything; the holds
// only veto, and never reach the quota the committer checks.
//
// Parking: a preemptor is visited every cycle while it waits, and what its hold stops
// is tried again next cycle (QuotaHeldInCycle). The queue heads' holds are found from
// every pending workload, parked or not, as the cycle starts (Input.HeadHolds), and
// hold for the whole cycle, so a cycle handed only the workloads whose answer may have
// changed holds what a cycle handed every pending workload would. What they stop parks
// on quota (WaitingForQuota), woken when quota frees or a queue's claim shrinks
// (wakeForClaims); one whose queue may preempt is tried every cycle (stoppedByHold).
type cycleHolds struct {
	preempt []admission.Assignment // preemptors' requests
	byPre   []api.WorkloadID       // the preemptors
	gone    []api.WorkloadID       // their victims
	heads   []admission.Assignment // queue heads' holds (ClusterQueue, Usage, holder)
	// q is the cycle's quota with the heads' holds counted, kept in step with the
	// cycle's admissions (nil: no head holds).
	q Quota
	// holders are, by ClusterQueue, the heads holding for the other queues (holders).
	holders map[string][]api.WorkloadID
}

// kueueCycle reports whether the cycle follows Kueue's (head order and holds).
func (c *cycle) kueueCycle() bool { return c.e.cfg.HeadOrder == HeadOrderKueue }

// headsOf is the head of each ClusterQueue of ps that may hold: its highest priority,
// then earliest queued, then least ID (the head of Kueue's queue).
func headsOf(ps []Pending, q Quota) []Pending {
	best := map[string]Pending{}
	for _, p := range ps {
		if b, ok := best[p.ClusterQueue]; !ok || headBefore(p.Workload.Priority, p.QueuedAt.UnixNano(), p.id(), b.Workload.Priority, b.QueuedAt.UnixNano(), b.id()) {
			best[p.ClusterQueue] = p
		}
	}
	var out []Pending
	for _, cq := range slices.Sorted(maps.Keys(best)) {
		if q.MayHold(cq) {
			out = append(out, best[cq])
		}
	}
	return out
}

// headBefore orders a queue's pending workloads as Kueue's queue does.
func headBefore(prio int32, queued int64, id api.WorkloadID, prio2 int32, queued2 int64, id2 api.WorkloadID) bool {
	switch {
	case prio != prio2:
		return prio > prio2
	case queued != queued2:
		return queued < queued2
	}
	return id < id2
}

// holdsOf are the holds of the queue heads as the quota q stands: each head that
// needs preemption in its ClusterQueue (Kueue rates it Preempt also where the queue
// may preempt nothing) and has no victims holds Quota.Unreclaimable of it. Victims are
// looked for only with preemption on and where the queue may preempt. A head already
// waiting for victims it noticed holds as a preemptor instead (holdWaiting).
func holdsOf(q Quota, heads []Pending, preemption bool, nominated map[api.WorkloadID][]api.WorkloadID) []admission.Assignment {
	out := []admission.Assignment{} // not nil: Input.HeadHolds nil means "not computed
	for _, p := range heads {
		if len(nominated[p.id()]) > 0 {
			continue
		}
		a := q.Assign(p.Workload, p.ClusterQueue)
		blocked := a.Mode == admission.NoFit && a.Code == admission.WaitingForQuota
		if blocked {
			a = q.AssignBlocked(p.Workload, p.ClusterQueue)
		}
		if a.Mode != admission.Preempt {
			continue
		}
		if preemption && !blocked {
			if vr := q.Victims(p.Workload, a); len(vr.Victims) > 0 {
				continue
			}
		}
		if amounts := q.Unreclaimable(a); len(amounts) > 0 {
			out = append(out, admission.Assignment{Workload: p.id(), ClusterQueue: p.ClusterQueue, Usage: amounts})
		}
	}
	return out
}

// placeHolds takes the cycle's queue heads' holds (Input.HeadHolds, else those of the
// heads among Pending).
func (c *cycle) placeHolds() {
	h := &c.quotaHolds
	h.heads = c.in.HeadHolds
	if h.heads == nil {
		h.heads = holdsOf(c.in.Quota, headsOf(c.in.Pending, c.in.Quota), c.e.cfg.Preemption, c.in.Nominated)
	}
	if len(h.heads) > 0 {
		h.q = c.in.Quota.WithHeld(h.heads)
	}
}

// holding is the hold p itself makes as a queue head (nil: none).
func (c *cycle) holding(p Pending) []admission.FlavorAmount {
	for _, h := range c.quotaHolds.heads {
		if h.Workload == p.id() {
			return h.Usage
		}
	}
	return nil
}

// ownHold is the hold of ClusterQueue cq's head (nil: none): a queue's own workloads
// are not held out by its head.
func (c *cycle) ownHold(cq string) []admission.FlavorAmount {
	for _, a := range c.quotaHolds.heads {
		if a.ClusterQueue == cq {
			return a.Usage
		}
	}
	return nil
}

// holders are the heads holding quota for queues other than cq, made once per queue and
// cycle (rejections share them and never change them).
func (c *cycle) holders(cq string) []api.WorkloadID {
	h := &c.quotaHolds
	if by, ok := h.holders[cq]; ok {
		return by
	}
	var by []api.WorkloadID
	for _, a := range h.heads {
		if a.ClusterQueue != cq {
			by = append(by, a.Workload)
		}
	}
	if h.holders == nil {
		h.holders = map[string][]api.WorkloadID{}
	}
	h.holders[cq] = by
	return by
}

// heldShort reports, by Short's cheap bound, that p would be held out: the other
// queue heads' holds leave too little for it. A quota seeker it stops is not visited,
// as a visit would refuse it (quota_seekers.go).
func (c *cycle) heldShort(p Pending) bool {
	h := &c.quotaHolds
	return h.q != nil && h.q.ShortHeld(p, c.ownHold(p.ClusterQueue))
}

// admitted keeps the held copy in step with an admission of the cycle, and tells the
// stirred workloads of its cohort tree (stirred.go).
func (c *cycle) admitted(a admission.Assignment) {
	c.noteAdmission(a.ClusterQueue) // stirred.go
	if c.quotaHolds.q != nil {
		c.quotaHolds.q.Hold(a.ClusterQueue, a.Usage)
	}
}

// heldOut checks a fitting assignment of p against the holds and rejects p when one
// stops it (heldBy).
func (c *cycle) heldOut(p Pending, a admission.Assignment) bool {
	reason, ev, held := c.heldBy(p, a)
	if held {
		c.personal = true // the answer depends on the cycle's holds, not the class
		c.reject(p, plan.LayerAdmission, reason, ev)
	}
	return held
}

// heldBy says whether a hold stops a fitting assignment a of p, and why: the
// preemptors' requests, their victims gone (QuotaHeldInCycle, tried again next cycle),
// or the other queues' heads' holds (WaitingForQuota: parked until quota frees).
func (c *cycle) heldBy(p Pending, a admission.Assignment) (plan.Reason, *plan.Evidence, bool) {
	h := &c.quotaHolds
	if len(h.preempt) > 0 && !c.in.Quota.FitsAfter(a, h.preempt, h.gone) {
		return plan.ReasonQuotaHeldInCycle, &plan.Evidence{HeldFor: slices.Clone(h.byPre)}, true
	}
	if len(h.heads) == 0 {
		return "", nil, false
	}
	if h.q == nil || h.q.FitsHeld(a, c.ownHold(p.ClusterQueue), h.preempt, h.gone) {
		return "", nil, false
	}
	return plan.ReasonWaitingForQuota, &plan.Evidence{HeldFor: c.holders(p.ClusterQueue), Quota: keep(a)}, true
}

// holdPreemptor counts preemptor p (assignment a, mode Preempt) with its victims for the
// rest of the cycle, if it fits with the cycle's earlier preemptors counted and all
// their victims gone; it reports whether it did (Kueue skips the preemption otherwise).
// The queue heads' holds do not stop a preemptor (Kueue's stop only heads after them).
func (c *cycle) holdPreemptor(p Pending, a admission.Assignment, victims []api.WorkloadID) bool {
	h := &c.quotaHolds
	gone := append(slices.Clip(h.gone), victims...)
	if !c.in.Quota.FitsAfter(a, h.preempt, gone) {
		return false
	}
	h.gone = gone
	h.preempt = append(h.preempt, a)
	h.byPre = append(h.byPre, p.id())
	return true
}

// holdWaiting counts a preemptor still waiting for the victims it noticed in an earlier
// cycle, as Kueue does each cycle it finds the same victims being evicted.
func (c *cycle) holdWaiting(p Pending, a admission.Assignment) {
	var victims []api.WorkloadID
	for _, v := range c.in.Nominated[p.id()] {
		if c.in.InFlight[v] {
			victims = append(victims, v)
		}
	}
	c.holdPreemptor(p, a, victims)
}

// headHolds are, in Kueue's cycle, the holds of the heads of the ClusterQueues that may
// hold (Input.HeadHolds), from every pending workload, parked or not, against the
// quota as the cycle starts. When a queue's claim shrinks, what is parked in its cohort
// tree may fit now (wakeForClaims). A queue's head is found again
// only when its pending workloads changed (trackHead). A head its queues stop holds
// nothing.
func (s *Scheduler) headHolds(q *admission.Quota, nominated map[api.WorkloadID][]api.WorkloadID) []admission.Assignment {
	if s.eng.cfg.HeadOrder != HeadOrderKueue {
		return nil
	}
	for cq := range s.headsDirty {
		s.headOf[cq] = headIn(s.pendingByCQ[cq])
	}
	clear(s.headsDirty)
	heads := make([]Pending, 0, len(s.headOf))
	for _, cq := range slices.Sorted(maps.Keys(s.headOf)) {
		e := s.headOf[cq]
		if e == nil || !q.MayHold(cq) {
			continue
		}
		if _, blocked := s.queueBlock(e); blocked {
			continue
		}
		heads = append(heads, s.pendingOf(e))
	}
	holds := s.keptHolds(q, heads, nominated)
	s.wakeForClaims(q, holds)
	return holds
}

// headHold is one queue head's hold as last computed (hold nil: it holds nothing), with
// what it was computed from: the head, the quota and its cohort tree's version.
type headHold struct {
	head  *api.Workload
	quota *admission.Quota
	ver   int64
	hold  *admission.Assignment
}

// keptHolds is holdsOf for heads, each answered again only when its queue's head or its
// cohort tree's admitted workloads changed since the last cycle: a cycle that admits or
// finishes in one tree leaves the other trees' holds as they were (holdsOf reads the
// head's tree alone).
func (s *Scheduler) keptHolds(q *admission.Quota, heads []Pending, nominated map[api.WorkloadID][]api.WorkloadID) []admission.Assignment {
	aq := NewAdmissionQuota(q, nil)
	out := []admission.Assignment{} // not nil: computed (Input.HeadHolds)
	for _, p := range heads {
		if len(nominated[p.id()]) > 0 {
			continue // a preemptor waiting for its victims holds in the cycle instead
		}
		ver, ok := q.TreeVersion(p.ClusterQueue)
		m, kept := s.holdMemo[p.ClusterQueue]
		if !ok || !kept || m.head != p.Workload || m.quota != q || m.ver != ver {
			m = headHold{head: p.Workload, quota: q, ver: ver}
			if h := holdsOf(aq, []Pending{p}, s.eng.cfg.Preemption, nil); len(h) > 0 {
				m.hold = &h[0]
			}
			s.holdMemo[p.ClusterQueue] = m
		}
		if m.hold != nil {
			out = append(out, *m.hold)
		}
	}
	return out
}

// wakeForClaims counts as freed capacity (capacityFreed: the quota-parked workloads of
// the tree that may fit are handed to the cycle) a holding queue's claim (its usage and
// its head's hold, cell by cell) that shrank since the last cycle. A claim that only
// moves from hold to usage (the head, or a workload of its queue, admitted) wakes
// nothing; usage that leaves wakes through capacityFreed already. It runs before the
// cycle's wakes (Scheduler.Cycle).
func (s *Scheduler) wakeForClaims(q *admission.Quota, holds []admission.Assignment) {
	now := make(map[string][]admission.FlavorAmount, len(holds))
	for _, h := range holds {
		claim := make([]admission.FlavorAmount, len(h.Usage))
		for i, u := range h.Usage {
			claim[i] = admission.FlavorAmount{FlavorResource: u.FlavorResource, Amount: u.Amount + q.Usage(h.ClusterQueue, u.Flavor, u.Resource)}
		}
		now[h.ClusterQueue] = claim
	}
	for cq, was := range s.lastClaims {
		for _, c := range was {
			have := q.Usage(cq, c.Flavor, c.Resource)
			for _, n := range now[cq] {
				if n.FlavorResource == c.FlavorResource {
					have = n.Amount
				}
			}
			if have < c.Amount {
				s.capacityFreed(cq)
				break
			}
		}
	}
	s.lastClaims = now
}

// headIn is the head of a queue's pending workloads (nil: none).
func headIn(set map[*entry]struct{}) *entry {
	var best *entry
	for e := range set {
		if best == nil || headBefore(e.w.Priority, e.queuedAt.UnixNano(), e.id, best.w.Priority, best.queuedAt.UnixNano(), best.id) {
			best = e
		}
	}
	return best
}

// trackHead keeps the pending workloads of e's ClusterQueue as e moves to phase p, for
// the queue heads of Kueue's cycle.
func (s *Scheduler) trackHead(e *entry, p phase) {
	if s.eng.cfg.HeadOrder != HeadOrderKueue {
		return
	}
	cq := e.res.ClusterQueue
	set := s.pendingByCQ[cq]
	if set == nil {
		set = map[*entry]struct{}{}
		s.pendingByCQ[cq] = set
	}
	if p == phasePending {
		set[e] = struct{}{}
	} else {
		delete(set, e)
	}
	s.headsDirty[cq] = true
}

// stoppedByHold reports whether a queue head's hold stopped a workload whose quota fits
// (its rejection names the holders). It parks on quota, woken when quota frees or a hold
// shrinks (Scheduler.headHolds); one whose queue may preempt is tried again every cycle
// instead, since an admission in its cohort tree may turn its answer into a
// preemption in the same cycle.
func stoppedByHold(r plan.Rejection) bool {
	return r.Reason == plan.ReasonWaitingForQuota && r.Evidence != nil && len(r.Evidence.HeldFor) > 0
}
