package admission

import "github.com/gantry-sched/gantry/pkg/api"

// PartialResult is AssignPartial's answer: the workload as it would be admitted (the
// workload itself, or its reduced copy when partial admission reduced it), the
// assignment for it and, when that needs preemption, the victims found.
type PartialResult struct {
	Workload   *api.Workload
	Assignment Assignment
	Victims    PreemptionResult
}

// AssignPartial assigns flavors the way Kueue's scheduler does for a workload that may
// be admitted with fewer pods: full counts first, admitted when they fit (borrowing
// included) or when preempting finds victims for them; only then the largest reduced
// counts that fit directly or with victims (SearchReduced). When nothing works the
// answer is the full-count one. protected is FindVictims'.
func (q *Quota) AssignPartial(wl *api.Workload, cq string, protected func(api.WorkloadID) bool) PartialResult {
	full := q.Assign(wl, cq)
	out := PartialResult{Workload: wl, Assignment: full}
	if full.Fits() {
		return out
	}
	if full.Mode == Preempt {
		out.Victims = q.FindVictims(wl, full, protected)
		if len(out.Victims.Victims) > 0 || !Reducible(wl) {
			return out
		}
	}
	red, a, ok := SearchReduced(wl, func(w *api.Workload) PartialFit {
		a := q.Assign(w, cq)
		if a.Fits() {
			return PartialFit{Assignment: a, OK: true}
		}
		ok := a.Mode == Preempt && len(q.FindVictims(w, a, protected).Victims) > 0
		return PartialFit{Assignment: a, OK: ok}
	})
	if !ok {
		return out
	}
	out = PartialResult{Workload: red, Assignment: a}
	if a.Mode == Preempt {
		out.Victims = q.FindVictims(red, a, protected)
	}
	return out
}
