package engine

import (
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// Partial admission (admission.SearchReduced): a workload whose pod sets state a
// minimum count and whose full counts neither fit the quota nor find victims to preempt
// is tried with fewer pods, the largest counts that fit directly or with victims, as
// Kueue does. The cycle then goes on with the reduced copy: placement places exactly
// the admitted pods, all of them one gang, and the plan's admission carries the
// admitted counts (plan.PodSetAssignment.Count; Quota.PodSets[i].FullCount the asked).

// reduce returns the pending workload and assignment the cycle should go on with: p and
// a themselves unless partial admission applies and finds counts that work.
func (c *cycle) reduce(p Pending, a admission.Assignment) (Pending, admission.Assignment) {
	// Reducible first: only a reducible workload pays for a second victim search (the
	// preemption step searches again for the one it keeps).
	if a.Fits() || !admission.Reducible(p.Workload) || a.Mode == admission.Preempt && c.hasVictims(p, a) {
		return p, a
	}
	red, ra, ok := admission.SearchReduced(p.Workload, func(w *api.Workload) admission.PartialFit {
		q := reducedPending(p, w)
		qa := c.assign(q, nil)
		return admission.PartialFit{Assignment: qa, OK: qa.Fits() || qa.Mode == admission.Preempt && c.hasVictims(q, qa)}
	})
	if !ok {
		return p, a
	}
	return reducedPending(p, red), ra
}

// hasVictims reports whether preempting for a (mode Preempt) could go ahead: preemption
// is on and admission finds victims.
func (c *cycle) hasVictims(p Pending, a admission.Assignment) bool {
	return c.e.cfg.Preemption && len(c.in.Quota.Victims(p.Workload, a).Victims) > 0
}

// reducedPending is p with its workload replaced by the reduced copy w; what the
// scheduler kept for the full workload (shape, GPU demand, quota check) is recomputed.
func reducedPending(p Pending, w *api.Workload) Pending {
	q := p
	q.Workload, q.Shape, q.gpu, q.short = w, ShapeKey(w), nil, nil
	return q
}
