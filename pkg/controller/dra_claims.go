package controller

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
)

// errClaimNotCreated is wrapped by claimsOfPod when a claim from a template has not
// been created yet (kube-controller-manager's resourceclaim controller creates it and
// names it in pod.status.resourceClaimStatuses): the pod waits.
var errClaimNotCreated = errors.New("ResourceClaim not created yet")

// podClaimObj is one of a pod's claims with the ResourceClaim object it uses.
type podClaimObj struct {
	podClaim string // pod.spec.resourceClaims[].name
	key      string // "namespace/name" of the ResourceClaim
	shared   bool   // named directly by the pod: one claim for every pod naming it
	claim    *resourcev1.ResourceClaim
}

// claimsOfPod resolves the pod's claims to their ResourceClaim objects in the cache,
// in pod order. It fails when a claim is not created (errClaimNotCreated), not in
// the cache yet (the same: the informer shows it soon), or was made for another pod.
func claimsOfPod(pod *corev1.Pod, claims map[string]*resourcev1.ResourceClaim) ([]podClaimObj, error) {
	out := make([]podClaimObj, 0, len(pod.Spec.ResourceClaims))
	for i := range pod.Spec.ResourceClaims {
		pc := &pod.Spec.ResourceClaims[i]
		name, checkOwner, err := resourceclaim.Name(pod, pc)
		switch {
		case errors.Is(err, resourceclaim.ErrClaimNotFound):
			return nil, fmt.Errorf("pod %s/%s: spec.resourceClaims[%d] (%s): %w", pod.Namespace, pod.Name, i, pc.Name, errClaimNotCreated)
		case err != nil:
			return nil, fmt.Errorf("pod %s/%s: spec.resourceClaims[%d]: %w", pod.Namespace, pod.Name, i, err)
		case name == nil:
			continue // intentionally not created: nothing to allocate
		}
		key := pod.Namespace + "/" + *name
		claim := claims[key]
		if claim == nil {
			return nil, fmt.Errorf("pod %s/%s: spec.resourceClaims[%d] (%s): ResourceClaim %s: %w", pod.Namespace, pod.Name, i, pc.Name, *name, errClaimNotCreated)
		}
		if checkOwner {
			if err := resourceclaim.IsForPod(pod, claim); err != nil {
				return nil, fmt.Errorf("pod %s/%s: spec.resourceClaims[%d] (%s): %w", pod.Namespace, pod.Name, i, pc.Name, err)
			}
		}
		out = append(out, podClaimObj{podClaim: pc.Name, key: key, shared: pc.ResourceClaimName != nil, claim: claim})
	}
	return out, nil
}
