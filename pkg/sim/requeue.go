package sim

import (
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

// park records the plan's rejections as parked workloads. Rejections that a later cycle
// must see again without any event stay active: NotTried (attempt cap), waiting for
// noticed victims, and failed commits.
func (s *Simulator) park(p plan.Plan) {
	for _, r := range p.Rejections {
		st := s.wls[r.Workload]
		if st == nil || st.phase != plan.Pending {
			continue
		}
		st.parked = parkFor(r)
	}
}

// parkFor maps a rejection to what may help it.
func parkFor(r plan.Rejection) parkKind {
	switch r.Reason {
	case engine.ReasonNotTried, engine.ReasonWaitingForPreemption, "AdmitFailed":
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
// (a head never runs without its followers behind it). It marks the instant dirty when
// anything woke.
func (s *Simulator) wake(match func(st *wlState) bool) {
	var strict map[string]bool
	for _, id := range s.order {
		st := s.wls[id]
		if st.parked == notParked || !match(st) {
			continue
		}
		st.parked = notParked
		s.dirty = true
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
	for _, id := range s.order {
		if st := s.wls[id]; st.parked != notParked && cqs[st.clusterQueue] {
			st.parked = notParked
			s.dirty = true
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
// on, a newly running workload is a new possible victim for parked workloads that may
// preempt it (by their queues' policies and priorities).
func (s *Simulator) admittedWakes(victim *wlState) {
	if !s.opts.Engine.Preemption {
		return
	}
	root := s.rootOf(victim.clusterQueue)
	s.wake(func(st *wlState) bool {
		if st.parked == parkedHead || s.rootOf(st.clusterQueue) != root {
			return false
		}
		return s.mayPreempt(st, victim)
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
