package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// claimWrite is one claim to allocate (or, allocated already, to reserve) for one pod
// before the pod's Binding.
type claimWrite struct {
	claim      *resourcev1.ResourceClaim // as the pass read it; re-read after a conflict
	shared     bool                      // named by several pods: allocated once, then only reserved
	allocation resourcev1.AllocationResult
}

// errClaimTaken is wrapped by reserveClaim when the claim is allocated to other devices
// than the pod's slot: never overwritten (the devices may be in use), a refusal.
var errClaimTaken = errors.New("allocated to other devices")

// claimAttempts bounds how often a write refused with a Conflict is read again and
// retried in one go; the next pass retries the rest.
const claimAttempts = 5

// reserveClaim makes w.claim allocated as w says and reserved for pod, as
// kube-scheduler's DRA plugin does in PreBind: the delete-protection finalizer first
// (kube-controller-manager's resourceclaim controller removes it once it deallocates),
// then status.allocation and status.reservedFor in one write. Every write carries the
// resourceVersion read, so a claim changed meanwhile is read again and checked again;
// a claim already allocated to other devices is refused, never overwritten. Done
// already (a retry after a crash, a shared claim's later pods) writes nothing more.
func reserveClaim(ctx context.Context, c client.Client, direct client.Reader, pod *corev1.Pod, w claimWrite) error {
	claim := w.claim
	for attempt := 0; ; attempt++ {
		err := reserveOnce(ctx, c, pod, claim, w)
		if !apierrors.IsConflict(err) || attempt+1 >= claimAttempts {
			return err
		}
		fresh := &resourcev1.ResourceClaim{}
		if err := direct.Get(ctx, client.ObjectKeyFromObject(claim), fresh); err != nil {
			return fmt.Errorf("ResourceClaim %s/%s: read after conflict: %w", claim.Namespace, claim.Name, err)
		}
		claim = fresh
	}
}

// reserveOnce is one attempt on claim as read; a Conflict means read again.
func reserveOnce(ctx context.Context, c client.Client, pod *corev1.Pod, claim *resourcev1.ResourceClaim, w claimWrite) error {
	if err := checkReservable(pod, claim, w); err != nil {
		return err
	}
	if resourceclaim.IsReservedForPod(pod, claim) && claim.Status.Allocation != nil {
		return nil
	}
	upd := claim.DeepCopy()
	if !slices.Contains(upd.Finalizers, resourcev1.Finalizer) {
		upd.Finalizers = append(upd.Finalizers, resourcev1.Finalizer)
		if err := c.Update(ctx, upd); err != nil {
			return claimErr(claim, "add finalizer", err)
		}
	}
	if upd.Status.Allocation == nil {
		upd.Status.Allocation = w.allocation.DeepCopy()
	}
	upd.Status.ReservedFor = append(upd.Status.ReservedFor,
		resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID})
	if err := c.Status().Update(ctx, upd); err != nil {
		return claimErr(claim, "write allocation and reservedFor", err)
	}
	return nil
}

// checkReservable refuses a claim that cannot take pod: being deleted, allocated to
// other devices (a shared claim only needs to be on the pod's node), or reserved for
// as many consumers as the API allows.
func checkReservable(pod *corev1.Pod, claim *resourcev1.ResourceClaim, w claimWrite) error {
	if claim.DeletionTimestamp != nil {
		return fmt.Errorf("ResourceClaim %s/%s: being deleted", claim.Namespace, claim.Name)
	}
	if a := claim.Status.Allocation; a != nil {
		same := sameDevices(*a, w.allocation)
		if w.shared {
			same = sameNodeSelector(*a, w.allocation)
		}
		if !same {
			return fmt.Errorf("ResourceClaim %s/%s: status.allocation: %w (%s, the slot wants %s)",
				claim.Namespace, claim.Name, errClaimTaken, deviceList(*a), deviceList(w.allocation))
		}
	}
	if !resourceclaim.IsReservedForPod(pod, claim) && len(claim.Status.ReservedFor) >= resourcev1.ResourceClaimReservedForMaxSize {
		return fmt.Errorf("ResourceClaim %s/%s: status.reservedFor: full (%d consumers)", claim.Namespace, claim.Name, len(claim.Status.ReservedFor))
	}
	return nil
}

// claimErr names the claim and the step; a Conflict stays recognisable.
func claimErr(claim *resourcev1.ResourceClaim, step string, err error) error {
	return fmt.Errorf("ResourceClaim %s/%s: %s: %w", claim.Namespace, claim.Name, step, err)
}

// allocatedDevice is one device of an allocation, as the kubelet prepares it.
type allocatedDevice struct{ request, driver, pool, device string }

func devicesOf(a resourcev1.AllocationResult) []allocatedDevice {
	out := make([]allocatedDevice, 0, len(a.Devices.Results))
	for _, r := range a.Devices.Results {
		out = append(out, allocatedDevice{r.Request, r.Driver, r.Pool, r.Device})
	}
	slices.SortFunc(out, func(x, y allocatedDevice) int {
		return cmp.Or(cmp.Compare(x.request, y.request), cmp.Compare(x.driver, y.driver),
			cmp.Compare(x.pool, y.pool), cmp.Compare(x.device, y.device))
	})
	return out
}

// sameDevices reports whether two allocations give the same devices to the same
// requests (the order of the results aside).
func sameDevices(a, b resourcev1.AllocationResult) bool {
	return slices.Equal(devicesOf(a), devicesOf(b))
}

// sameNodeSelector reports whether two allocations pin the claim to the same nodes.
func sameNodeSelector(a, b resourcev1.AllocationResult) bool {
	if a.NodeSelector == nil || b.NodeSelector == nil {
		return a.NodeSelector == nil && b.NodeSelector == nil
	}
	return a.NodeSelector.String() == b.NodeSelector.String()
}

// deviceList is an allocation's devices for messages: "gpu-0, gpu-1".
func deviceList(a resourcev1.AllocationResult) string {
	s := ""
	for i, d := range devicesOf(a) {
		if i > 0 {
			s += ", "
		}
		s += d.pool + "/" + d.device
	}
	if s == "" {
		return "no devices"
	}
	return s
}
