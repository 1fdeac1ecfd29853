package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
)

// planClaims fills in, for every binding of an admitted gang, the claims its pod
// must have allocated and reserved before its Binding: the devices of its slot, as
// DRA results (dra.PodClaims.Results). A shared claim (named directly, by pods of this
// gang or others) is allocated once: by the pod whose slot has its devices, unless it
// is allocated already; every other pod naming it only reserves it (sharedAllocs). It
// reports false, and why, when the gang cannot be bound yet (a claim from a template
// is not created yet, a shared claim waits for the pod that allocates it) or its
// claims cannot be computed; nothing of the gang is bound then.
func planClaims(w *world, bs []binding) (bool, error) {
	todo := make([]int, 0, len(bs))
	for i := range bs {
		if len(bs[i].pod.Spec.ResourceClaims) == 0 {
			continue
		}
		if w.dra == nil {
			return false, fmt.Errorf("pod %s/%s: spec.resourceClaims: the resource.k8s.io API is not watched", bs[i].pod.Namespace, bs[i].pod.Name)
		}
		todo = append(todo, i)
	}
	known := sharedAllocs{}
	// A pod that only reserves a shared claim the gang allocates may come before the
	// pod that allocates it: it is planned again once that one is.
	for len(todo) > 0 {
		var later []int
		var waitErr error
		for _, i := range todo {
			writes, err := claimWritesFor(w, bs[i].pod, bs[i].slot, known)
			if errors.Is(err, errSharedUnallocated) {
				later, waitErr = append(later, i), err
				continue
			}
			if err != nil {
				return false, err
			}
			bs[i].claims = writes
		}
		if len(later) == len(todo) {
			return false, waitErr
		}
		todo = later
	}
	return true, nil
}

// sharedAllocs are the allocations of shared claims by "namespace/name": those in the
// claims' status.allocation and those the gang's earlier bindings computed.
type sharedAllocs map[string]resourcev1.AllocationResult

// errSharedUnallocated is wrapped by claimWritesFor when a pod's slot lacks the devices
// of a shared claim it names that is not allocated yet: another pod's slot (of its gang
// or of a gang placed before it) has them, and allocates the claim first.
var errSharedUnallocated = errors.New("shared ResourceClaim not allocated yet: the pod whose slot has its devices allocates it")

// claimWritesFor computes the allocation of each of pod's claims for its slot: for its
// own claims and the shared claims not in known, from the slot's devices (known gets
// the shared ones); the shared claims in known are only reserved.
func claimWritesFor(w *world, pod *corev1.Pod, slot v1alpha1.PodPlacement, known sharedAllocs) ([]claimWrite, error) {
	objs, err := claimsOfPod(pod, w.dra.claims)
	if err != nil {
		return nil, err
	}
	s, err := newPodSlot(w, pod, slot)
	if err != nil {
		return nil, err
	}
	if err := known.seed(pod, objs, slot.Node); err != nil {
		return nil, err
	}
	byClaim, err := s.results(objs, known)
	if err != nil {
		return nil, err
	}
	out := make([]claimWrite, 0, len(objs))
	for _, o := range objs {
		alloc, ok := byClaim[o.podClaim]
		if !ok && o.shared {
			alloc, ok = known[o.key]
		}
		if !ok {
			return nil, fmt.Errorf("pod %s/%s: claim %s: no allocation for the slot on %s", pod.Namespace, pod.Name, o.podClaim, slot.Node)
		}
		if o.shared {
			known[o.key] = alloc
		}
		out = append(out, claimWrite{claim: o.claim, shared: o.shared, allocation: alloc})
	}
	return out, nil
}

// seed adds the allocated shared claims of objs to known. One allocated on another
// node than the pod's slot is refused (errClaimTaken): the pod cannot use it there.
func (known sharedAllocs) seed(pod *corev1.Pod, objs []podClaimObj, node string) error {
	for _, o := range objs {
		if !o.shared {
			continue
		}
		alloc, ok := known[o.key]
		if !ok && o.claim.Status.Allocation != nil {
			alloc, ok = *o.claim.Status.Allocation.DeepCopy(), true
			known[o.key] = alloc
		}
		if !ok {
			continue
		}
		if at, ok := allocationNode(alloc); ok && at != node {
			return fmt.Errorf("pod %s/%s: ResourceClaim %s: status.allocation: %w (on node %s, the pod's slot is on %s)",
				pod.Namespace, pod.Name, o.key, errClaimTaken, at, node)
		}
	}
	return nil
}

// podSlot is one pod's slot with what allocating from it needs.
type podSlot struct {
	w    *world
	pod  *corev1.Pod
	slot v1alpha1.PodPlacement
	node *cluster.Node
	inv  *dra.NodeInventory
}

func newPodSlot(w *world, pod *corev1.Pod, slot v1alpha1.PodPlacement) (*podSlot, error) {
	i, ok := w.nodeIndex[slot.Node]
	if !ok || w.nodes[i].Devices == nil {
		return nil, fmt.Errorf("pod %s/%s: node %s: no GPUs known", pod.Namespace, pod.Name, slot.Node)
	}
	node := &w.nodes[i]
	inv, err := dra.NewNodeInventory(node.Name, node.Devices.GPUs())
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", node.Name, err)
	}
	return &podSlot{w: w, pod: pod, slot: slot, node: node, inv: inv}, nil
}

// results allocates, from the slot's devices, the pod's claims but the shared ones in
// known, by pod claim name. The devices of the shared claims in known are not the
// slot's to give: the slot of the pod that allocated one still lists them (a retry
// after its claims were written). When the rest does not fit those claims and would fit
// them less the shared claims not allocated yet, the pod waits for the pod that
// allocates those (errSharedUnallocated).
func (s *podSlot) results(objs []podClaimObj, known sharedAllocs) (map[string]resourcev1.AllocationResult, error) {
	var mine, unallocated []podClaimObj
	var taken []string // DRA device names of the known shared claims
	for _, o := range objs {
		if alloc, ok := known[o.key]; o.shared && ok {
			for _, r := range alloc.Devices.Results {
				if r.Driver == dra.DriverName && r.Pool == s.node.Name {
					taken = append(taken, r.Device)
				}
			}
			continue
		}
		mine = append(mine, o)
		if o.shared {
			unallocated = append(unallocated, o)
		}
	}
	ids := slices.DeleteFunc(slices.Clone(s.slot.Devices), func(id string) bool {
		name, ok := s.inv.DeviceName(id)
		return ok && slices.Contains(taken, name)
	})
	out, err := s.resultsFor(mine, ids)
	if err == nil || len(unallocated) == 0 {
		return out, err
	}
	own := slices.DeleteFunc(slices.Clone(mine), func(o podClaimObj) bool { return o.shared })
	if _, ownErr := s.resultsFor(own, ids); ownErr == nil {
		names := make([]string, len(unallocated))
		for k, o := range unallocated {
			names[k] = o.key
		}
		return nil, fmt.Errorf("pod %s/%s: ResourceClaim %s: %w", s.pod.Namespace, s.pod.Name, strings.Join(names, ", "), errSharedUnallocated)
	}
	return nil, err
}

// resultsFor allocates objs from the devices ids of the slot's node, by pod claim name
// (nothing for no claims: there must then be no devices).
func (s *podSlot) resultsFor(objs []podClaimObj, ids []string) (map[string]resourcev1.AllocationResult, error) {
	pod, node := s.pod, s.node
	if len(objs) == 0 {
		if len(ids) > 0 {
			return nil, fmt.Errorf("pod %s/%s: node %s: slot devices %s are in none of the claims left to allocate",
				pod.Namespace, pod.Name, node.Name, strings.Join(ids, ","))
		}
		return map[string]resourcev1.AllocationResult{}, nil
	}
	a, err := devices.AssignmentFromIDs(node.Devices, ids)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: node %s: %w", pod.Namespace, pod.Name, node.Name, err)
	}
	classes, err := s.w.dra.compiledClasses()
	if err != nil {
		return nil, err
	}
	specs := make([]dra.ClaimSpec, len(objs))
	for k, o := range objs {
		specs[k] = dra.ClaimSpec{Name: o.podClaim, Spec: o.claim.Spec}
		if o.shared {
			specs[k].Shared = o.key // "namespace/name", as manifest.ResolveClaims names it
		}
	}
	pc, err := classes.Compile(specs)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	results, err := pc.Results(s.inv, a)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s on %s: %w", pod.Namespace, pod.Name, node.Name, err)
	}
	out := make(map[string]resourcev1.AllocationResult, len(results))
	for _, r := range results {
		if r.Allocation.NodeSelector == nil {
			r.Allocation.NodeSelector = nodeSelectorFor(node.Name)
		}
		out[r.Claim] = r.Allocation
	}
	return out, nil
}

// nodeSelectorFor pins an allocation to one node, as kube-scheduler writes it for
// node-local devices.
func nodeSelectorFor(node string) *corev1.NodeSelector {
	return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
	}}}
}

// reserveClaims writes the claims of every pod of a gang before any pod of it is
// bound: a gang is bound whole, so its devices are allocated whole first. Writes to
// one claim (a shared claim's pods) go one after another; different claims go
// concurrently within the bind window. Any failure binds nothing: the next pass
// retries, and what was written already is found done.
func (bp *bindPipeline) reserveClaims(ctx context.Context, bs []binding) error {
	type job struct {
		pod *corev1.Pod
		w   claimWrite
	}
	var order []string
	groups := map[string][]job{}
	for _, b := range bs {
		for _, w := range b.claims {
			key := objKey(w.claim)
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], job{pod: b.pod, w: w})
		}
	}
	return bp.inWindow(ctx, len(order), func(i int) error {
		for _, j := range groups[order[i]] {
			if err := reserveClaim(ctx, bp.c, bp.direct, j.pod, j.w); err != nil {
				return err
			}
		}
		return nil
	})
}
