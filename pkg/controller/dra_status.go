package controller

import (
	"context"
	"errors"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Why an admitted gang with DRA claims is not bound yet, on its Workload. The gang
// keeps its admission (quota and slots stay its own, and the next pass tries again):
// the state stays Admitted and the reason and message say which claim holds it.
const (
	// ReasonWaitingForClaims: a pod's claim from a ResourceClaimTemplate is not created
	// yet (kube-controller-manager's resourceclaim controller creates it), or a shared
	// claim its pods only reserve is not allocated yet by the pod (of another gang)
	// whose slot has its devices; no pod of the gang is bound until every claim is there.
	ReasonWaitingForClaims = "WaitingForResourceClaims"
	// ReasonClaimRefused: a claim of the gang cannot take its pod's slot (it is
	// allocated to other devices, being deleted, or its spec does not compile); no pod
	// of the gang is bound.
	ReasonClaimRefused = "ResourceClaimRefused"
	// ReasonStaleClaim: the gang was placed next to a shared claim's allocation that
	// is gone from its slot's node (released, or allocated on another node) before any
	// pod of it was bound; its admission is dropped and it is queued again
	// (dra_stale.go), on the Evicted condition.
	ReasonStaleClaim = "StaleResourceClaim"
)

// claimHoldStatus is old with the reason a claim holds the gang (err names the pod
// and the claim), the admission kept.
func claimHoldStatus(old v1alpha1.WorkloadStatus, err error) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	st.Reason = ReasonClaimRefused
	if errors.Is(err, errClaimNotCreated) || errors.Is(err, errSharedUnallocated) {
		st.Reason = ReasonWaitingForClaims
	}
	st.Message = clip(err.Error(), maxDetailLine)
	return st
}

// claimsClearedStatus is old with the admission's own reason and message again, once no
// claim holds the gang; ok is false when no claim reason was written.
func claimsClearedStatus(old v1alpha1.WorkloadStatus) (v1alpha1.WorkloadStatus, bool) {
	if old.Admission == nil || (old.Reason != ReasonWaitingForClaims && old.Reason != ReasonClaimRefused) {
		return old, false
	}
	st := *old.DeepCopy()
	st.Reason, st.Message = ReasonAdmitted, ""
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.WorkloadAdmitted); c != nil {
		st.Message = c.Message
	}
	return st, true
}

// noteClaimHold writes on wl why its gang is not bound (claimHoldStatus). A failed
// write is only logged: the next pass meets the same claim and writes again.
func (ctl *Controller) noteClaimHold(ctx context.Context, wl *v1alpha1.Workload, err error) {
	if werr := ctl.writeWorkloadStatus(ctx, wl, claimHoldStatus(wl.Status, err)); werr != nil && ctx.Err() == nil {
		ctl.log.Error(werr, "write why the gang waits for its claims", "workload", wlKey(wl))
	}
}

// clearClaimHold takes a claim reason off wl once nothing holds its gang.
func (ctl *Controller) clearClaimHold(ctx context.Context, wl *v1alpha1.Workload) {
	st, ok := claimsClearedStatus(wl.Status)
	if !ok {
		return
	}
	if err := ctl.writeWorkloadStatus(ctx, wl, st); err != nil && ctx.Err() == nil {
		ctl.log.Error(err, "clear the claim reason", "workload", wlKey(wl))
	}
}
