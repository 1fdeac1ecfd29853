package sim

import (
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// quotaETA estimates when a workload held by quota could be admitted: the admitted
// workloads of its cohort tree are released in order of their expected ends (on a copy
// of the quota) until admission would accept it. It is a lower bound: it ignores the
// nodes and the workloads queued ahead of it. nil when no known end frees enough.
func (s *Simulator) quotaETA(st *wlState) (*Seconds, string) {
	type ending struct {
		at time.Duration
		id api.WorkloadID
	}
	root := s.sched.RootOf(st.clusterQueue)
	var ends []ending
	for id := range s.live.all() {
		r := s.wls[id]
		if (r.phase != plan.Running && r.phase != plan.Preempting) || s.sched.RootOf(r.clusterQueue) != root {
			continue
		}
		if _, counted := s.quota.Admitted(id); !counted {
			continue
		}
		if at, ok := r.expectedEnd(); ok {
			ends = append(ends, ending{at: at, id: id})
		}
	}
	sort.SliceStable(ends, func(i, j int) bool { return ends[i].at < ends[j].at })
	q := s.quota.Clone()
	for _, e := range ends {
		if err := q.Release(e.id); err != nil {
			continue
		}
		if q.Assign(st.w, st.clusterQueue).Fits() {
			eta := Seconds(e.at)
			return &eta, "estimated from quota: enough quota is free once " + string(e.id) +
				" ends (running workloads of the cohort tree ending as expected; nodes and workloads ahead not counted)"
		}
	}
	return nil, ""
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
