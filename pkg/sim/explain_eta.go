package sim

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// quotaETA estimates when a workload held by quota could be admitted
// (engine.Scheduler.QueuedQuotaETA): the admitted workloads of its cohort tree are
// released at their expected ends and the workloads queued ahead of it in its
// ClusterQueue start first. nil when no known end frees enough.
func (s *Simulator) quotaETA(st *wlState) (*Seconds, string) {
	root := s.sched.RootOf(st.clusterQueue)
	var ends []engine.Ending
	for id := range s.live.all() {
		r := s.wls[id]
		if (r.phase != plan.Running && r.phase != plan.Preempting) || s.sched.RootOf(r.clusterQueue) != root {
			continue
		}
		if at, ok := r.expectedEnd(); ok {
			ends = append(ends, engine.Ending{Workload: id, At: Epoch().Add(at)})
		}
	}
	q, ok := s.sched.QueuedQuotaETA(s.quota, st.id, ends, Epoch().Add(s.now))
	if !ok {
		return nil, ""
	}
	eta := Seconds(q.At.Sub(Epoch()))
	return &eta, q.Basis()
}

// expectedEnd is when a running workload should end: its remaining run time, else its
// maximum runtime; false when unknown (it runs until the end).
func (st *wlState) expectedEnd() (time.Duration, bool) {
	if rem := st.remaining(); rem > 0 {
		return st.startedAt + rem, true
	}
	if st.w.MaxRuntime > 0 {
		return st.startedAt + st.w.MaxRuntime, true
	}
	return 0, false
}
