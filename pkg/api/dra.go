package api

import (
	"github.com/gantry-sched/gantry/pkg/resources"
	resourcev1 "k8s.io/api/resource/v1"
)

// PodClaim is one entry of a pod template's spec.resourceClaims (Dynamic Resource
// Allocation), kept as the pod wrote it, with the claim spec it resolves to.
//
// Exactly one of ResourceClaimTemplateName and ResourceClaimName is set: a template
// gives every pod a claim of its own; a ResourceClaim named directly is one claim that
// every pod naming it shares (allocated once, its pods on its node).
type PodClaim struct {
	// Name is the claim's name inside the pod (spec.resourceClaims[].name), which
	// containers' resources.claims refer to.
	Name                      string
	ResourceClaimTemplateName string
	ResourceClaimName         string
	// Containers are the containers (init containers included) whose
	// resources.claims list the claim, in pod order.
	Containers []string
	// Field is where the object wrote it (e.g. "spec.template.spec.resourceClaims[0]"),
	// so errors about the claim name the field.
	Field string
	// Spec is the claim's spec resolved from the template or the claim; nil until a
	// resolver (the file loader, or the controller from its informers) has found it.
	Spec *resourcev1.ResourceClaimSpec
}

// Shared reports whether the pod names a ResourceClaim directly: one claim for every
// pod that names it.
func (c PodClaim) Shared() bool { return c.ResourceClaimName != "" }

// Reference is the object the claim comes from, for messages:
// "ResourceClaimTemplate x" or "ResourceClaim x".
func (c PodClaim) Reference() string {
	if c.Shared() {
		return "ResourceClaim " + c.ResourceClaimName
	}
	return "ResourceClaimTemplate " + c.ResourceClaimTemplateName
}

// HasClaims reports whether the pod set asks for devices through DRA claims.
func (p PodSet) HasClaims() bool { return len(p.Claims) > 0 }

// DeviceClass is a resource.k8s.io/v1 DeviceClass as read, with where it came from.
type DeviceClass struct {
	Object resourcev1.DeviceClass
	Source Source
}

// ResourceClaimTemplate is a resource.k8s.io/v1 ResourceClaimTemplate as read.
type ResourceClaimTemplate struct {
	Object resourcev1.ResourceClaimTemplate
	Source Source
}

// ResourceClaim is a resource.k8s.io/v1 ResourceClaim as read (status dropped: an
// allocation is the scheduler's to make).
type ResourceClaim struct {
	Object resourcev1.ResourceClaim
	Source Source
}

// ResourceSlice is a resource.k8s.io/v1 ResourceSlice as read: what a node's DRA
// driver publishes. A node dump's slices give the GPUs of nodes that advertise none
// through the device plugin.
type ResourceSlice struct {
	Object resourcev1.ResourceSlice
	Source Source
}

// DeviceClassMapping counts devices of the listed DeviceClasses against quota as
// Resource, one unit per device (Kueue's Configuration resources.deviceClassMappings).
type DeviceClassMapping struct {
	Resource         resources.Name
	DeviceClassNames []string
	Source           Source
}

// DeviceClassObjects lists the DeviceClasses' API objects, in load order.
func (o *Objects) DeviceClassObjects() []resourcev1.DeviceClass {
	out := make([]resourcev1.DeviceClass, len(o.DeviceClasses))
	for i := range o.DeviceClasses {
		out[i] = o.DeviceClasses[i].Object
	}
	return out
}

// SlicesOfNode lists the ResourceSlices published for node (spec.nodeName), in load
// order.
func (o *Objects) SlicesOfNode(node string) []resourcev1.ResourceSlice {
	var out []resourcev1.ResourceSlice
	for i := range o.ResourceSlices {
		if s := &o.ResourceSlices[i].Object; s.Spec.NodeName != nil && *s.Spec.NodeName == node {
			out = append(out, *s)
		}
	}
	return out
}
