package controller

import (
	"context"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/plan"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podsReadyHold applies waitForPodsReady.blockAdmission to a cycle's plan: while an
// admitted workload's pods are not all Ready no admission is committed, otherwise only
// the first (it is not Ready yet either once admitted), as Kueue admits one at a time.
// It returns the plan to commit and the admissions held back. The held ones stay
// pending in the scheduler (it is told the whole plan, with them not applied, as the
// simulator's committer does), so a later pass tries them again; preemptions go ahead.
func (ctl *Controller) podsReadyHold(p plan.Plan, w *world) (plan.Plan, []plan.Admission) {
	cfg := ctl.opts.PodsReady
	if cfg == nil || !cfg.BlockAdmission || len(p.Admissions) == 0 {
		return p, nil
	}
	keep := 1
	if w.anyAdmittedUnready() {
		keep = 0
	}
	if len(p.Admissions) <= keep {
		return p, nil
	}
	held := p.Admissions[keep:]
	heldIDs := make(map[api.WorkloadID]bool, len(held))
	for _, a := range held {
		heldIDs[a.Workload] = true
	}
	out := p
	out.Admissions = slices.Clone(p.Admissions[:keep])
	out.Bindings = slices.DeleteFunc(slices.Clone(p.Bindings), func(b plan.Binding) bool { return heldIDs[b.Workload] })
	return out, held
}

// anyAdmittedUnready reports whether an admitted workload's pods are not all Ready.
func (w *world) anyAdmittedUnready() bool {
	for i := range w.workloads {
		if wl := &w.workloads[i]; awaitsReadiness(wl) && !w.podsReady(wl) {
			return true
		}
	}
	return false
}

// noteHeld writes on each held workload why it waits (Kueue's message); a failed write
// is retried by the next pass, which holds it again.
func (ctl *Controller) noteHeld(ctx context.Context, cs *cycleState, held []plan.Admission, now time.Time) {
	for _, a := range held {
		if t := cs.byID[a.Workload]; t != nil {
			_ = ctl.writeWorkloadStatus(ctx, t.obj, heldStatus(t.obj.Status, now))
		}
	}
}

// heldStatus is a pending workload's status while blockAdmission holds its admission.
func heldStatus(old v1alpha1.WorkloadStatus, now time.Time) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	setCondition(&st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionFalse, ReasonWaitingPodsReady, msgHeld, now)
	if st.State != v1alpha1.StateEvicted {
		st.State = v1alpha1.StatePending
	}
	st.Reason, st.Message = ReasonWaitingPodsReady, msgHeld
	setWhy(&st, string(plan.LayerAdmission), []string{msgHeld}, "")
	st.ETA, st.ETABasis, st.Position = nil, "", nil
	return st
}
