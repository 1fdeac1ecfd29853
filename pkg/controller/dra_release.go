package controller

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// releaseClaims deallocates what kube-controller-manager's resourceclaim controller
// leaves allocated. That controller (Kubernetes 1.34) drops a reservation once its pod
// is deleted or done, clears the allocation of a claim reserved for nobody and removes
// the delete-protection finalizer, and deletes a template's claim once its pod is
// done; so the claims of pods that went away need nothing from Gantry. What it cannot
// know is a pod that still exists, was never bound, and whose gang is no longer
// admitted: evicted before its binds, or found after a restart with claims written
// and its admission gone. Their reservations are Gantry's to drop, and a claim left
// reserved for nobody is deallocated the same way. A failed write is retried by a
// later pass (the claim is still found).
func (ctl *Controller) releaseClaims(ctx context.Context, w *world) {
	if w.dra == nil || len(w.dra.claims) == 0 {
		return // no claim to release (and no pass-long walk over every pod for it)
	}
	stale := stalePods(w)
	if len(stale) == 0 {
		return
	}
	for _, key := range sortedClaimKeys(w.dra.claims) {
		claim := w.dra.claims[key]
		if claim.Status.Allocation == nil || !slices.Contains(claim.Finalizers, resourcev1.Finalizer) {
			continue // not allocated, or not by a scheduler
		}
		if err := releaseClaim(ctx, ctl.c, claim, stale); err != nil {
			ctl.log.Info("release claim", "claim", key, "error", err.Error())
			ctl.retry = true
		}
	}
}

// stalePods are the UIDs of Gantry's pods that are not bound, not deleted and not in
// an admitted workload: a reservation for one of them holds devices nothing will use.
func stalePods(w *world) map[types.UID]bool {
	var waiting []*corev1.Pod
	for _, p := range w.pods {
		if p.Spec.SchedulerName == SchedulerName && p.Spec.NodeName == "" && p.DeletionTimestamp == nil &&
			len(p.Spec.ResourceClaims) > 0 && p.Status.Phase == corev1.PodPending {
			waiting = append(waiting, p)
		}
	}
	out := map[types.UID]bool{}
	if len(waiting) == 0 {
		return out // the admitted workloads' pods need not be gathered
	}
	covered := admittedPodUIDs(w)
	for _, p := range waiting {
		if !covered[p.UID] {
			out[p.UID] = true
		}
	}
	return out
}

// releaseClaim drops the claim's reservations for stale pods and, when none is left,
// its allocation and then its finalizer, as kube-controller-manager does for a claim
// whose pods are gone. Both writes carry the resourceVersion read: a claim changed
// meanwhile is left to the next pass.
func releaseClaim(ctx context.Context, c client.Client, claim *resourcev1.ResourceClaim, stale map[types.UID]bool) error {
	keep := make([]resourcev1.ResourceClaimConsumerReference, 0, len(claim.Status.ReservedFor))
	for _, r := range claim.Status.ReservedFor {
		if r.APIGroup != "" || r.Resource != "pods" || !stale[r.UID] {
			keep = append(keep, r)
		}
	}
	if len(keep) == len(claim.Status.ReservedFor) {
		return nil
	}
	upd := claim.DeepCopy()
	upd.Status.ReservedFor = keep
	if len(keep) == 0 {
		upd.Status.Allocation = nil
	}
	if err := c.Status().Update(ctx, upd); err != nil {
		return claimErr(claim, "drop reservations of pods that will not run", err)
	}
	if upd.Status.Allocation != nil {
		return nil
	}
	upd.Finalizers = slices.DeleteFunc(upd.Finalizers, func(f string) bool { return f == resourcev1.Finalizer })
	if err := c.Update(ctx, upd); err != nil {
		return claimErr(claim, fmt.Sprintf("remove finalizer %s", resourcev1.Finalizer), err)
	}
	return nil
}
