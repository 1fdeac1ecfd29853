package controller

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonCapacityRevoked is the Warning event on a Workload whose admitted pods lost
// the capacity a ProvisioningRequest gave them.
const ReasonCapacityRevoked = "CapacityRevoked"

// Capacity revoked after admission, as Kueue handles it: cluster-autoscaler sets
// CapacityRevoked on the ProvisioningRequest of a running workload when it takes the
// nodes back. Kueue marks the check Rejected, which deactivates the workload (evicted,
// its Job suspended, not tried again), since replacement pods would wait forever for
// nodes that are gone. Gantry records the same in the Workload's status (the check
// Rejected, Requeued False with AdmissionCheckRejected for this generation, the hold
// checkHoldOf reads after the eviction) and evicts through the preemption notice with
// a deadline of now, so the eviction is evictDue's: binds settled first, the Job
// suspended, the pods evicted through the Eviction API, the admission released.

// revokedCheck is the first check of an admitted wl whose request the autoscaler
// marked CapacityRevoked, with the condition's message; ok is false when there is none.
func (cs *cycleState) revokedCheck(wl *v1alpha1.Workload) (v1alpha1.AdmissionCheckState, string, bool) {
	for _, c := range wl.Status.AdmissionChecks {
		if c.ProvisioningRequest == "" {
			continue
		}
		e, found := cs.provReqs[wl.Namespace+"/"+c.ProvisioningRequest]
		if !found || e.workload != wl.UID {
			continue
		}
		if msg, revoked := e.conds.true[provCapacityRevoked]; revoked {
			return c, msg, true
		}
	}
	return v1alpha1.AdmissionCheckState{}, "", false
}

// revokeAdmitted deactivates and evicts an admitted workload whose capacity was
// revoked. The status is written first: a failed notice is sent again by the next
// pass, which finds the request still revoked.
func (k *committer) revokeAdmitted(t *tracked) {
	if t.noticed() {
		return // already leaving
	}
	check, condMsg, ok := k.cs.revokedCheck(t.obj)
	if !ok {
		return
	}
	why := fmt.Sprintf("admission check %s rejected the workload: ProvisioningRequest %s: capacity revoked: %s; deactivated until its spec changes",
		check.Name, check.ProvisioningRequest, condMsg)
	st := *t.obj.Status.DeepCopy()
	setCheckState(&st, check.Name, check.ProvisioningRequest, provCheckDecision{State: api.CheckRejected, Message: condMsg}, k.now)
	setDeactivated(&st, t.obj.Generation, why, k.now)
	st.Reason, st.Message = ReasonCheckRejected, why
	if !sameStatus(t.obj.Status, st) || !deactivatedFor(t.obj) {
		if err := k.writeStatus(t.obj, st); err != nil {
			return
		}
	}
	if err := annotateWorkload(k.ctx, k.c, t.obj, k.now, ReasonCheckRejected+": "+why, "", nil); err != nil {
		k.events.Eventf(t.obj, "Warning", ReasonCapacityRevoked, "ProvisioningRequest %s/%s: capacity revoked; eviction not started, retrying: %v",
			t.obj.Namespace, check.ProvisioningRequest, err)
		return
	}
	k.events.Eventf(t.obj, "Warning", ReasonCapacityRevoked, "ProvisioningRequest %s/%s: capacity revoked (%s): evicting and deactivating the workload",
		t.obj.Namespace, check.ProvisioningRequest, condMsg)
}

// setDeactivated marks the workload as not to be tried again while its spec is this
// generation (checkHoldOf reads it once the workload is pending).
func setDeactivated(st *v1alpha1.WorkloadStatus, generation int64, msg string, now time.Time) {
	setCondition(st, ConditionRequeued, metav1.ConditionFalse, ReasonCheckRejected, msg, now)
	for i := range st.Conditions {
		if st.Conditions[i].Type == ConditionRequeued {
			st.Conditions[i].ObservedGeneration = generation
		}
	}
}

// deactivatedFor reports whether wl's status already holds the deactivation for its
// current generation (sameStatus ignores observed generations).
func deactivatedFor(wl *v1alpha1.Workload) bool {
	rq := meta.FindStatusCondition(wl.Status.Conditions, ConditionRequeued)
	return rq != nil && rq.Status == metav1.ConditionFalse && rq.Reason == ReasonCheckRejected && rq.ObservedGeneration == wl.Generation
}
