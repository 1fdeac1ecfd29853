package sim

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// changes remember what moved since the last sample, for DeltaObservers (delta.go): the
// nodes whose pods, devices or readiness changed, the ClusterQueues whose usage, quota
// or counts changed, and the workloads whose phase changed. Tracking is off (every
// touch is a no-op) when no observer takes deltas.
type changes struct {
	on    bool
	sent  bool // the first, full delta went out
	nodes map[string]bool
	cqs   map[string]bool
	wls   map[api.WorkloadID]bool
	// class is each live workload's class at the last delta and counts the per-queue
	// tallies of those classes, so a queue's counts cost nothing to keep.
	class  map[api.WorkloadID]wlClass
	counts map[string]*[2]int // ClusterQueue -> pending, running
}

// wlClass is how a sample counts a workload.
type wlClass int

const (
	classNone    wlClass = iota // not submitted yet, or finished
	classPending                // submitted and waiting
	classRunning                // running or noticed
)

// classOf is st's class now, as State counts it.
func classOf(st *wlState) wlClass {
	switch {
	case st.phase == plan.Pending && st.submitted:
		return classPending
	case st.phase == plan.Running || st.phase == plan.Preempting:
		return classRunning
	}
	return classNone
}

// trackChanges turns tracking on when some observer takes deltas.
func (s *Simulator) trackChanges() {
	for _, o := range s.opts.Observers {
		if _, ok := o.(DeltaObserver); ok {
			s.chg = changes{on: true, nodes: map[string]bool{}, cqs: map[string]bool{}, wls: map[api.WorkloadID]bool{},
				class: map[api.WorkloadID]wlClass{}, counts: map[string]*[2]int{}}
			return
		}
	}
}

// touchNode notes that a node's pods, devices or readiness may have changed.
func (s *Simulator) touchNode(name string) {
	if s.chg.on {
		s.chg.nodes[name] = true
	}
}

// touchBindings notes the nodes of a workload's pods.
func (s *Simulator) touchBindings(bs []plan.Binding) {
	for _, b := range bs {
		s.touchNode(b.Node)
	}
}

// touchWorkload notes that a workload's phase may have changed, and with it its queue's
// counts and usage.
func (s *Simulator) touchWorkload(st *wlState) {
	if s.chg.on {
		s.chg.wls[st.w.ID()] = true
		s.chg.cqs[st.clusterQueue] = true
	}
}

// touchAllQueues notes a quota change: the quota is rebuilt, so every queue is re-read.
func (s *Simulator) touchAllQueues() {
	if s.chg.on {
		for _, name := range s.quota.ClusterQueues() {
			s.chg.cqs[name] = true
		}
	}
}
