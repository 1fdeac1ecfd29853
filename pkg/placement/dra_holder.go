package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A shared claim (a ResourceClaim pods name directly) is allocated once, by the first
// pod that uses it, whichever workload that pod belongs to. Its devices are then held
// by the claim itself, not by that pod: a holder, bound on the cluster like a pod
// (ClaimHolder), on the node the claim is allocated on. So the allocation is part of
// the state every overlay can undo (a what-if placement that is undone leaves no claim
// allocated), it outlives the pod that made it while other pods still use it, and every
// later pod naming the claim finds its node there. The driver removes the holder when
// the last pod using the claim is gone (the simulator at unbind): the devices are free
// again, and the next pod naming the claim allocates it afresh.

// ClaimHolderPrefix starts the workload ID of a claim holder: "claim:namespace/name",
// as the controller names the allocated claims it records as occupants.
const ClaimHolderPrefix = "claim:"

// claimHolderPodSet is the pod set of every holder (one holder per claim).
const claimHolderPodSet = "claim"

// ClaimHolder is the record that holds shared claim key's ("namespace/name") devices.
func ClaimHolder(key string) cluster.PodRef {
	return cluster.PodRef{Workload: api.WorkloadID(ClaimHolderPrefix + key), PodSet: claimHolderPodSet}
}

// HolderClaim is the shared claim ref holds, if ref is a holder.
func HolderClaim(ref cluster.PodRef) (string, bool) {
	if ref.PodSet != claimHolderPodSet || ref.Index != 0 {
		return "", false
	}
	return strings.CutPrefix(string(ref.Workload), ClaimHolderPrefix)
}

// ClaimNode is the index of the node shared claim key is allocated on in ov; false
// when it is not allocated.
func ClaimNode(ov *cluster.Overlay, key string) (int, bool) {
	bp, ok := ov.Pod(ClaimHolder(key))
	if !ok {
		return -1, false
	}
	return ov.NodeIndex(bp.Node)
}

// heldAt says which of claims are allocated already and on which node (-1: none);
// two claims allocated on different nodes cannot be used by one pod.
func heldAt(ov *cluster.Overlay, claims []string) (node int, held []string, err error) {
	node = -1
	for _, c := range claims {
		at, ok := ClaimNode(ov, c)
		if !ok {
			continue
		}
		if node >= 0 && at != node {
			return -1, nil, fmt.Errorf("shared claims %s and %s are allocated on different nodes (%s, %s): no pod can use both",
				held[0], c, ov.Node(node).Name, ov.Node(at).Name)
		}
		node, held = at, append(held, c)
	}
	return node, held, nil
}

// AssumeWithClaims assumes pod ref of pod set ps (of workload w) on node i with the
// devices a of its slot: those of its own claims and of the shared claims not allocated
// yet. Those shared claims are allocated with it: their devices pass to their holders,
// on the same node, and the pod keeps the rest. A shared claim allocated already must
// be on node i, and its devices are not in a (the pod takes nothing more for it). A
// pod set naming no shared claim is assumed as it is. On error the overlay is as before.
func AssumeWithClaims(ov *cluster.Overlay, claims *DeviceClaims, w *api.Workload, ps *api.PodSet, ref cluster.PodRef, i int, requests resources.Vector, a devices.Assignment) error {
	shared := sharedClaimsOf(ps, w.Namespace)
	at, held, err := heldAt(ov, shared)
	if err != nil {
		return fmt.Errorf("pod %s: %w", ref, err)
	}
	if at >= 0 && at != i {
		return fmt.Errorf("pod %s: node %s: shared claim %s is allocated on node %s", ref, ov.Node(i).Name, held[0], ov.Node(at).Name)
	}
	if len(held) == len(shared) {
		return ov.AssumeAt(ref, i, requests, a)
	}
	own, parts, err := splitSlot(ov, claims, w, ps, i, held, a)
	if err != nil {
		return fmt.Errorf("pod %s: %w", ref, err)
	}
	mark := ov.Mark()
	if err := ov.AssumeAt(ref, i, requests, own); err != nil {
		return err
	}
	for _, key := range shared {
		if slices.Contains(held, key) {
			continue
		}
		if err := ov.AssumeAt(ClaimHolder(key), i, resources.Vector{}, parts[key]); err != nil {
			ov.Undo(mark)
			return fmt.Errorf("shared claim %s: %w", key, err)
		}
	}
	return nil
}

// splitSlot splits the slot a of a pod of ps on node i (its claims but the shared ones
// in held) into the devices of each shared claim it allocates and the pod's own rest,
// matching devices to claims as the claims' allocation results do (dra.Results).
func splitSlot(ov *cluster.Overlay, claims *DeviceClaims, w *api.Workload, ps *api.PodSet, i int, held []string, a devices.Assignment) (devices.Assignment, map[string]devices.Assignment, error) {
	pc, err := claims.compileWithout(ps, w.Namespace, held)
	if err != nil {
		return devices.Assignment{}, nil, err
	}
	nd := ov.Devices(i)
	if pc == nil || nd == nil {
		return devices.Assignment{}, nil, fmt.Errorf("node %s: no devices to allocate the shared claims from", ov.Node(i).Name)
	}
	inv, err := dra.NewNodeInventory(ov.Node(i).Name, nd.GPUs())
	if err != nil {
		return devices.Assignment{}, nil, err
	}
	results, err := pc.Results(inv, a)
	if err != nil {
		return devices.Assignment{}, nil, err
	}
	owner := map[string]string{} // device ID -> the shared claim that takes it
	for _, r := range results {
		key := sharedKey(ps, w.Namespace, r.Claim)
		if key == "" {
			continue
		}
		for _, d := range r.Allocation.Devices.Results {
			if d.AdminAccess != nil && *d.AdminAccess {
				continue // looked at, not taken
			}
			id, ok := inv.DeviceID(d.Device)
			if !ok {
				return devices.Assignment{}, nil, fmt.Errorf("node %s: shared claim %s: device %s is not the node's", ov.Node(i).Name, key, d.Device)
			}
			owner[id] = key
		}
	}
	var own devices.Assignment
	parts := map[string]devices.Assignment{}
	for _, d := range a.Devices {
		if key, ok := owner[d.ID()]; ok {
			p := parts[key]
			p.Devices = append(p.Devices, d)
			parts[key] = p
			continue
		}
		own.Devices = append(own.Devices, d)
	}
	return own, parts, nil
}

// sharedKey is "namespace/name" of the shared claim ps's pods call podClaim; "" when
// that claim is a pod's own (from a template).
func sharedKey(ps *api.PodSet, namespace, podClaim string) string {
	for _, c := range ps.Claims {
		if c.Name == podClaim && c.Shared() {
			return namespace + "/" + c.ResourceClaimName
		}
	}
	return ""
}
