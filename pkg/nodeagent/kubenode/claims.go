package kubenode

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-sched/gantry/pkg/dra"
)

// holdsDRAGPU reports whether pod p holds a GPU of this node through a DRA claim: one of
// its spec.resourceClaims is a ResourceClaim allocated a device of the GPU driver
// (gpu.nvidia.com, the agent's DRA plugin) from the pool named after the node. Such a
// pod asks for no extended resource, yet a MIG change must wait for it as for any GPU
// pod. A claim that does not exist (deleted, or its template's claim not created yet)
// holds nothing.
func (n *Node) holdsDRAGPU(ctx context.Context, p *corev1.Pod) (bool, error) {
	for _, name := range claimNames(p) {
		c, err := n.Client.ResourceV1().ResourceClaims(p.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("pod %s/%s: reading ResourceClaim %s/%s: %w", p.Namespace, p.Name, p.Namespace, name, err)
		}
		if allocatedGPUOn(c, n.Name) {
			return true, nil
		}
	}
	return false, nil
}

// claimNames are the ResourceClaims pod p uses: those spec.resourceClaims names, and
// those the ResourceClaim controller created from templates (status.resourceClaimStatuses;
// an entry without a name needed no claim).
func claimNames(p *corev1.Pod) []string {
	generated := map[string]string{}
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			generated[s.Name] = *s.ResourceClaimName
		}
	}
	var out []string
	for _, rc := range p.Spec.ResourceClaims {
		switch {
		case rc.ResourceClaimName != nil:
			out = append(out, *rc.ResourceClaimName)
		case generated[rc.Name] != "":
			out = append(out, generated[rc.Name])
		}
	}
	return out
}

// allocatedGPUOn reports whether claim c is allocated a device of the GPU driver from
// node's pool (the DRA plugin publishes one pool named after its node).
func allocatedGPUOn(c *resourcev1.ResourceClaim, node string) bool {
	if c.Status.Allocation == nil {
		return false
	}
	for _, r := range c.Status.Allocation.Devices.Results {
		if r.Driver == dra.DriverName && r.Pool == node {
			return true
		}
	}
	return false
}
