package sim

import (
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// startReserved starts a workload whose checks all passed on the quota it reserved, as
// Kueue admits it then: its gang is placed now (on the provisioned nodes, when it needed
// them) and committed like any admission. It reports false, changing nothing, when the
// gang does not fit (other work took the nodes meanwhile).
func (s *Simulator) startReserved(st *wlState, pw *provWorkload) (bool, error) {
	claims, err := s.deviceClaims()
	if err != nil {
		return false, err
	}
	bs, ok := engine.PlaceGang(s.snap.Overlay(), reducedTo(st.w, pw.asg), pw.asg, s.prov.flavors, claims)
	if !ok {
		return false, nil
	}
	// The committer admits quota and binds in one step; the reservation it replaces is
	// handed back first, and taken again if the commit is refused.
	if err := s.quota.Release(st.id); err != nil {
		return false, err
	}
	ov := s.snap.Overlay()
	a := plan.Admission{Workload: st.id, ClusterQueue: pw.asg.ClusterQueue, PodSets: engine.PodSetAssignments(pw.asg), Borrowing: pw.asg.Borrows(), Quota: pw.asg}
	if err := (modelCommitter{s: s}).admit(ov, a, bs); err != nil {
		return false, s.quota.Admit(st.w, pw.asg)
	}
	s.snap = ov.Seal()
	pw.reserved = false
	s.dirty = true
	return true, nil
}

// reducedTo is w with each pod set at the count a admitted (partial admission admits
// fewer pods than asked for).
func reducedTo(w *api.Workload, a admission.Assignment) *api.Workload {
	out := *w
	out.PodSets = append([]api.PodSet(nil), w.PodSets...)
	for _, pa := range a.PodSets {
		for i := range out.PodSets {
			if ps := &out.PodSets[i]; ps.Name == pa.Name && pa.Count > 0 && pa.Count < ps.Count {
				ps.Count = pa.Count
				if ps.MinCount > pa.Count {
					ps.MinCount = pa.Count
				}
			}
		}
	}
	return &out
}
