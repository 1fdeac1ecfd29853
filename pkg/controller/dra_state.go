package controller

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// admittedPodUIDs are the UIDs of the live pods of every admitted, unfinished workload:
// their claims' devices are charged through the workload's admission (its placements),
// bound or not yet.
func admittedPodUIDs(w *world) map[types.UID]bool {
	out := map[types.UID]bool{}
	for i := range w.workloads {
		wl := &w.workloads[i]
		if wl.Status.Admission == nil || (&tracked{obj: wl}).finished() {
			continue
		}
		for _, p := range w.podsOf(wl) {
			out[p.UID] = true
		}
	}
	return out
}

// heldClaim is an allocated shared ResourceClaim as the cycle state holds it: the
// node it is allocated on and the Gantry device IDs it takes there.
type heldClaim struct {
	node string
	ids  []string
}

// claimState is what the pass reads from the allocated ResourceClaims.
type claimState struct {
	// held are the allocated shared claims by "namespace/name": each is a holder bound
	// on its node (placement.ClaimHolder), as the simulator keeps them.
	held map[string]heldClaim
	// changes bind the holders and the occupants.
	changes []cluster.Change
}

// readClaims turns the allocated claims into cycle state. A shared claim (one pods
// name directly) is held by its holder, whoever allocated it and whether or not an
// admitted pod's reservation covers it: every pod naming it then goes to its node and
// takes nothing more for it (admittedPods takes its devices out of the placement of
// the pod that allocated it). Once no pod reserves it, kube-controller-manager clears
// its allocation and the holder goes with it. The other allocated claims no admission
// accounts for are occupants of their devices: claims kube-scheduler or another
// allocator made, claims of pods whose workload finished while kube-controller-manager
// has not released them yet, and, after a restart, claims allocated for a gang that is
// no longer admitted (releaseClaims frees those). A device in such a claim is never
// given to another. Both are recorded as occupants, so one released frees capacity.
func readClaims(w *world, cs *cycleState) claimState {
	st := claimState{held: map[string]heldClaim{}}
	if w.dra == nil || len(w.dra.claims) == 0 {
		return st
	}
	covered := admittedPodUIDs(w)
	inv := map[string]*dra.NodeInventory{}
	for _, key := range sortedClaimKeys(w.dra.claims) {
		claim := w.dra.claims[key]
		if claim.Status.Allocation == nil {
			continue
		}
		byNode := claimDeviceIDs(w, claim, inv, &cs.warnings)
		if isSharedClaim(claim) {
			if node, ok := holderNode(claim, byNode); ok {
				if c, ok := claimBinding(w, cs, key, placement.ClaimHolder(key), node, byNode[node]); ok {
					st.held[key] = heldClaim{node: node, ids: byNode[node]}
					st.changes = append(st.changes, c)
				}
				continue
			}
			if len(byNode) > 1 {
				cs.warnings = append(cs.warnings, fmt.Sprintf("ResourceClaim %s: status.allocation: devices on %d nodes; a shared claim is held on one", key, len(byNode)))
			}
		}
		if coveredClaim(claim, covered) {
			continue
		}
		for _, node := range sortedNodes(byNode) {
			ref := cluster.PodRef{Workload: api.WorkloadID(placement.ClaimHolderPrefix + key), PodSet: node}
			if c, ok := claimBinding(w, cs, key, ref, node, byNode[node]); ok {
				st.changes = append(st.changes, c)
			}
		}
	}
	return st
}

// claimBinding binds ref, holding claim key's devices ids on node, as an occupant.
func claimBinding(w *world, cs *cycleState, key string, ref cluster.PodRef, node string, ids []string) (cluster.Change, bool) {
	i, ok := w.nodeIndex[node]
	if !ok {
		cs.warnings = append(cs.warnings, fmt.Sprintf("ResourceClaim %s: node %s: not in the cluster", key, node))
		return cluster.Change{}, false
	}
	var a devices.Assignment
	if len(ids) > 0 {
		var err error
		if a, err = devices.AssignmentFromIDs(w.nodes[i].Devices, ids); err != nil {
			cs.warnings = append(cs.warnings, fmt.Sprintf("ResourceClaim %s: node %s: %v", key, node, err))
			return cluster.Change{}, false
		}
	}
	cs.occupants[string(ref.Workload)] = true
	return cluster.Change{Op: cluster.OpBind, Pod: cluster.BoundPod{Ref: ref, Node: node, Requests: resources.Vector{}, Devices: a}}, true
}

// isSharedClaim reports whether the claim is one pods name directly
// (resourceClaimName), not a claim kube-controller-manager made from a template for
// one pod (that one is controlled by its pod).
func isSharedClaim(claim *resourcev1.ResourceClaim) bool {
	owner := metav1.GetControllerOf(claim)
	return owner == nil || owner.Kind != "Pod" || owner.APIVersion != "v1"
}

// holderNode is the node a shared claim is allocated on: the pool of its devices of
// Gantry's driver, else (it takes none of them) the node its allocation is pinned to.
// False when that is not one node.
func holderNode(claim *resourcev1.ResourceClaim, byNode map[string][]string) (string, bool) {
	switch len(byNode) {
	case 1:
		for node := range byNode {
			return node, true
		}
	case 0:
		return allocationNode(*claim.Status.Allocation)
	}
	return "", false
}

// allocationNode is the one node an allocation is for: the pool of its first device
// of Gantry's driver (the pool is the node, as the driver publishes it), else the node
// its node selector names (as nodeSelectorFor writes it); false when neither says.
func allocationNode(a resourcev1.AllocationResult) (string, bool) {
	for _, r := range a.Devices.Results {
		if r.Driver == dra.DriverName {
			return r.Pool, true
		}
	}
	if a.NodeSelector == nil || len(a.NodeSelector.NodeSelectorTerms) != 1 {
		return "", false
	}
	t := a.NodeSelector.NodeSelectorTerms[0]
	if len(t.MatchExpressions) > 0 || len(t.MatchFields) != 1 {
		return "", false
	}
	f := t.MatchFields[0]
	if f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || len(f.Values) != 1 {
		return "", false
	}
	return f.Values[0], true
}

// coveredClaim reports whether the claim is reserved for a pod of an admitted workload.
func coveredClaim(claim *resourcev1.ResourceClaim, covered map[types.UID]bool) bool {
	for _, r := range claim.Status.ReservedFor {
		if r.Resource == "pods" && covered[r.UID] {
			return true
		}
	}
	return false
}

// claimDeviceIDs maps an allocation's devices of Gantry's driver to Gantry device IDs
// per node (the pool is the node, as the driver publishes it); devices of unknown
// nodes or names are reported and left out, and so are admin-access devices (looked
// at, not taken: they stay free for others).
func claimDeviceIDs(w *world, claim *resourcev1.ResourceClaim, inv map[string]*dra.NodeInventory, warnings *[]string) map[string][]string {
	out := map[string][]string{}
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != dra.DriverName || (r.AdminAccess != nil && *r.AdminAccess) {
			continue
		}
		i, ok := w.nodeIndex[r.Pool]
		if !ok || w.nodes[i].Devices == nil {
			*warnings = append(*warnings, fmt.Sprintf("ResourceClaim %s/%s: device %s/%s: no such node with GPUs", claim.Namespace, claim.Name, r.Pool, r.Device))
			continue
		}
		ni := inv[r.Pool]
		if ni == nil {
			var err error
			if ni, err = dra.NewNodeInventory(r.Pool, w.nodes[i].Devices.GPUs()); err != nil {
				*warnings = append(*warnings, fmt.Sprintf("node %s: %v", r.Pool, err))
				continue
			}
			inv[r.Pool] = ni
		}
		id, ok := ni.DeviceID(r.Device)
		if !ok {
			*warnings = append(*warnings, fmt.Sprintf("ResourceClaim %s/%s: device %s/%s: not a device of the node", claim.Namespace, claim.Name, r.Pool, r.Device))
			continue
		}
		out[r.Pool] = append(out[r.Pool], id)
	}
	return out
}

// withoutHeld is the device IDs ids of a pod of pod set ps (of a workload in
// namespace) on node, less those of the allocated shared claims it names there: the
// pod that allocated a claim was placed (and its gantry.dev/devices written) with the
// claim's devices, which the claim's holder holds now.
func withoutHeld(ids []string, node string, ps *api.PodSet, namespace string, held map[string]heldClaim) []string {
	var drop []string
	for _, key := range placement.SharedClaims(ps, namespace) {
		if h, ok := held[key]; ok && h.node == node {
			drop = append(drop, h.ids...)
		}
	}
	if len(drop) == 0 {
		return ids
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(drop, id) })
}

// allocating is an admitted pod naming a shared claim no allocation holds yet: its
// gang is admitted and not bound, and the pod that allocates the claim has its devices
// in its placement. It is assumed as the simulator binds it (assumeAllocating).
type allocating struct {
	w   *api.Workload
	ps  *api.PodSet
	pod cluster.BoundPod
}

// unheldShared reports whether ps's pods name a shared claim that is not held.
func unheldShared(ps *api.PodSet, namespace string, held map[string]heldClaim) bool {
	for _, key := range placement.SharedClaims(ps, namespace) {
		if _, ok := held[key]; !ok {
			return true
		}
	}
	return false
}

// assumeAllocating assumes the admitted pods naming shared claims not allocated yet
// as the simulator binds them (placement.AssumeWithClaims): the pod whose placement
// has a claim's devices hands them to the claim's holder, so a later cycle sees the
// claim allocated on its node before its ResourceClaim is written, and every other
// pod naming it goes there too. A pod that does not allocate the claim fails until the
// one that does is in, so the pods are tried again while any succeeds; one left is
// assumed with its placement as it is (its devices stay charged either way).
func assumeAllocating(ov *cluster.Overlay, w *world, pods []allocating, warnings *[]string) {
	if len(pods) == 0 {
		return
	}
	var claims *placement.DeviceClaims
	if w.dra != nil {
		if classes, err := w.dra.compiledClasses(); err == nil {
			claims = placement.NewDeviceClaims(classes)
		}
	}
	left := pods
	for len(left) > 0 && claims != nil {
		var next []allocating
		for _, p := range left {
			i, ok := ov.NodeIndex(p.pod.Node)
			if !ok || placement.AssumeWithClaims(ov, claims, p.w, p.ps, p.pod.Ref, i, p.pod.Requests, p.pod.Devices) != nil {
				next = append(next, p)
			}
		}
		if len(next) == len(left) {
			break
		}
		left = next
	}
	for _, p := range left {
		if err := ov.Assume(p.pod.Ref, p.pod.Node, p.pod.Requests, p.pod.Devices); err != nil {
			*warnings = append(*warnings, fmt.Sprintf("pod %s on %s: %v", p.pod.Ref, p.pod.Node, err))
		}
	}
}

func sortedClaimKeys(m map[string]*resourcev1.ResourceClaim) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedNodes(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
