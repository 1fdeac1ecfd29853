package sim

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// parkKind says why a pending workload is parked as inadmissible, and so which changes
// can help it. Parked workloads are left out of the engine's input until such a change
// wakes them: a cycle never re-runs a failure that nothing has changed (no polling).
type parkKind int

const (
	notParked parkKind = iota
	// parkedQuota: admission refused it. Quota freed in its cohort tree or a quota
	// change can help (not nodes: admission does not look at them).
	parkedQuota
	// parkedNodes: quota fits but the nodes do not (or reservations block it). Capacity
	// freed anywhere, nodes added or returned, or a quota change (the fallback flavor
	// may have been refused by quota) can help.
	parkedNodes
	// parkedHead: a StrictFIFO follower behind a parked head; it wakes with its queue.
	parkedHead
)

// afterCommit parks the plan's rejections and wakes what the plan itself may help:
// new running workloads are possible victims, and a reservation given up, used or
// moved no longer holds the GPUs (or the reservation slot) it held off others with.
func (s *Simulator) afterCommit(p plan.Plan, applied []api.WorkloadID, reservedBefore map[api.WorkloadID]plan.Reservation) {
	s.park(p)
	for id, before := range reservedBefore {
		if now := s.wls[id].reservation; now == nil || !sameReservation(before, *now) {
			s.wakeForNodes()
			break
		}
	}
	var started []*wlState
	for _, id := range applied {
		if st := s.wls[id]; st != nil {
			started = append(started, st)
		}
	}
	s.admittedWakes(started...)
}

// reservedNow is the reservations pending workloads hold, by workload.
func (s *Simulator) reservedNow() map[api.WorkloadID]plan.Reservation {
	out := map[api.WorkloadID]plan.Reservation{}
	for _, id := range s.live {
		if st := s.wls[id]; st.phase == plan.Pending && st.reservation != nil {
			out[id] = *st.reservation
		}
	}
	return out
}

// sameReservation reports whether two reservations hold the same GPUs from the same
// time (what later workloads of a cycle are steered around).
func sameReservation(a, b plan.Reservation) bool {
	if !a.ETA.Equal(b.ETA) || !equalStrings(a.Nodes, b.Nodes) || len(a.Pods) != len(b.Pods) {
		return false
	}
	for i := range a.Pods {
		pa, pb := a.Pods[i], b.Pods[i]
		if pa.Ref != pb.Ref || pa.Node != pb.Node || !equalStrings(pa.Devices.IDs(), pb.Devices.IDs()) {
			return false
		}
	}
	return true
}

// timedWakes handles what only time changes, with preemption on: a running workload
// past its minimum runtime becomes a possible victim, and a preemption older than its
// queue's disruption-budget window stops counting against the budget. Both are
// checked for the span since the last cycle, so no timer events are needed.
func (s *Simulator) timedWakes() {
	if !s.opts.Engine.Preemption || s.cycle == 0 {
		return
	}
	// Inclusive at both ends: a wake at the boundary instant itself may come too early
	// for the layer's own comparison, so the next cycle wakes again (waking is idempotent).
	from, to := s.lastCycleAt, s.now
	within := func(t time.Duration) bool { return t >= from && t <= to }
	var unprotected []*wlState
	for _, id := range s.live {
		st := s.wls[id]
		if st.phase == plan.Running && st.w.MinRuntime > 0 && within(st.startedAt+st.w.MinRuntime) {
			unprotected = append(unprotected, st)
		}
	}
	s.admittedWakes(unprotected...)
	for _, h := range s.history {
		if cq := s.cqs[h.queue]; cq != nil && cq.DisruptionBudget.Window > 0 && within(h.at+cq.DisruptionBudget.Window) {
			s.wakeAll()
			return
		}
	}
}

// String says what wakes a parked workload, for explain.
func (k parkKind) String() string {
	switch k {
	case parkedQuota:
		return "quota is freed in its cohort tree or quotas change"
	case parkedNodes:
		return "GPUs are freed, nodes are added or return, a reservation ends, or quotas change"
	case parkedHead:
		return "the head of its StrictFIFO ClusterQueue is retried"
	}
	return "-"
}

// park records the plan's rejections as parked workloads. Rejections that a later cycle
// must see again without any event stay active: NotTried (attempt cap), waiting for
// noticed victims, and failed commits.
//
// When the cycle made reservations, placement rejections stay active too: the GPUs a
// reservation holds are held only for workloads ordered after it, and the order moves
// with every ClusterQueue's share (any admission or finish anywhere), as does who gets
// one of the limited reservation slots. Parking them would change decisions.
func (s *Simulator) park(p plan.Plan) {
	if s.opts.RetryAll {
		return
	}
	holds := len(p.Reservations) > 0
	// activeHead: StrictFIFO queues whose blocking head stays active (reserved, or a
	// rejection that is not parked): their followers must stay active with it.
	activeHead := map[string]bool{}
	for _, r := range p.Reservations {
		if st := s.wls[r.Workload]; st != nil {
			activeHead[st.clusterQueue] = true
		}
	}
	for _, r := range p.Rejections {
		st := s.wls[r.Workload]
		if st == nil || st.phase != plan.Pending {
			continue
		}
		k := parkFor(r)
		if k == parkedNodes && holds {
			k = notParked
		}
		if k != parkedHead {
			st.parked = k
			if k == notParked {
				activeHead[st.clusterQueue] = true
			}
		}
	}
	for _, r := range p.Rejections {
		if st := s.wls[r.Workload]; st != nil && st.phase == plan.Pending && parkFor(r) == parkedHead && !activeHead[st.clusterQueue] {
			st.parked = parkedHead
		}
	}
}

// parkFor maps a rejection to what may help it.
func parkFor(r plan.Rejection) parkKind {
	switch r.Reason {
	case engine.ReasonNotTried, engine.ReasonWaitingForPreemption, engine.ReasonHeldForPreemptor, "AdmitFailed":
		return notParked
	case engine.ReasonBlockedByHead:
		return parkedHead
	}
	if r.Layer == plan.LayerAdmission {
		return parkedQuota
	}
	return parkedNodes
}

// wake makes parked workloads that match pending again; StrictFIFO queues wake whole
// (a head never runs without its followers behind it). It does not start a cycle: the
// event that called it does, or the next one will (so an admission that wakes a
// possible preemptor changes nothing about when cycles run).
func (s *Simulator) wake(match func(st *wlState) bool) {
	var strict map[string]bool
	for _, id := range s.live {
		st := s.wls[id]
		if st.parked == notParked || !match(st) {
			continue
		}
		st.parked = notParked
		if st.strategy == api.StrictFIFO {
			if strict == nil {
				strict = map[string]bool{}
			}
			strict[st.clusterQueue] = true
		}
	}
	if strict != nil {
		s.wakeQueues(strict)
	}
}

// wakeQueues wakes every parked workload of the named ClusterQueues.
func (s *Simulator) wakeQueues(cqs map[string]bool) {
	for _, id := range s.live {
		if st := s.wls[id]; st.parked != notParked && cqs[st.clusterQueue] {
			st.parked = notParked
		}
	}
}

// wakeAll wakes every parked workload (quota change, disruption budget window over).
func (s *Simulator) wakeAll() { s.wake(func(*wlState) bool { return true }) }

// wakeForNodes wakes the workloads the nodes refused: capacity came back.
func (s *Simulator) wakeForNodes() {
	s.wake(func(st *wlState) bool { return st.parked == parkedNodes })
}

// capacityFreed wakes what a workload leaving ClusterQueue cq may help: quota in its
// cohort tree, and GPUs on its nodes.
func (s *Simulator) capacityFreed(cq string) {
	root := s.rootOf(cq)
	s.wake(func(st *wlState) bool {
		return st.parked == parkedNodes || (st.parked == parkedQuota && s.rootOf(st.clusterQueue) == root)
	})
}

// admittedWakes handles the one case where an admission helps others: with preemption
// on, a newly running (or newly unprotected) workload is a new possible victim for
// parked workloads of its cohort tree that may preempt it (by their queues' policies
// and priorities). One pass over the workloads for all victims.
func (s *Simulator) admittedWakes(victims ...*wlState) {
	if !s.opts.Engine.Preemption || len(victims) == 0 {
		return
	}
	s.wake(func(st *wlState) bool {
		if st.parked == parkedHead {
			return false
		}
		root := s.rootOf(st.clusterQueue)
		for _, v := range victims {
			if s.rootOf(v.clusterQueue) == root && s.mayPreempt(st, v) {
				return true
			}
		}
		return false
	})
}

// mayPreempt is a conservative reading of the preemptor's ClusterQueue policy: could
// it ever choose victim (true when unsure)?
func (s *Simulator) mayPreempt(pre, victim *wlState) bool {
	cq := s.cqs[pre.clusterQueue]
	if cq == nil {
		return false
	}
	pp, vp := pre.w.Priority, victim.w.Priority
	if pre.clusterQueue == victim.clusterQueue {
		switch cq.Preemption.WithinClusterQueue {
		case api.PreemptLowerPriority:
			return pp > vp
		case api.PreemptLowerOrNewerEqualPriority:
			return pp >= vp
		case api.PreemptNever, "":
			return false
		}
		return true
	}
	switch {
	case cq.Preemption.ReclaimWithinCohort == api.PreemptAny:
		return true
	case cq.Preemption.ReclaimWithinCohort == api.PreemptLowerPriority:
		return pp > vp
	}
	bwc := cq.Preemption.BorrowWithinCohort.Policy
	return bwc != "" && bwc != api.PreemptNever && pp > vp
}

// rootOf is the root of ClusterQueue cq's cohort tree ("cq:" + its name when it has no
// cohort): quota freed anywhere in a tree can be borrowed anywhere in it.
func (s *Simulator) rootOf(cq string) string {
	if r, ok := s.roots[cq]; ok {
		return r
	}
	return "cq:" + cq
}

// buildRoots resolves every ClusterQueue's cohort root once (cohorts do not change
// during a simulation). A parent cycle stops at the repeat; the loader rejects them.
func (s *Simulator) buildRoots() {
	parent := make(map[string]string, len(s.objs.Cohorts))
	for _, c := range s.objs.Cohorts {
		parent[c.Name] = c.Parent
	}
	s.roots = make(map[string]string, len(s.objs.ClusterQueues))
	for _, cq := range s.objs.ClusterQueues {
		if cq.Cohort == "" {
			s.roots[cq.Name] = "cq:" + cq.Name
			continue
		}
		root, seen := cq.Cohort, map[string]bool{cq.Cohort: true}
		for parent[root] != "" && !seen[parent[root]] {
			root = parent[root]
			seen[root] = true
		}
		s.roots[cq.Name] = "cohort:" + root
	}
}

// arrived handles a submission: in a StrictFIFO queue with a parked head the newcomer
// may sort before it or must wait behind it, so the queue is woken and ordered again.
func (s *Simulator) arrived(st *wlState) {
	if st.strategy != api.StrictFIFO {
		return
	}
	s.wakeQueues(map[string]bool{st.clusterQueue: true})
}
