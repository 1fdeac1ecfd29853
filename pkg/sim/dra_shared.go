package sim

import (
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Shared ResourceClaims in the model: a claim named directly by pods of one workload or
// several is allocated once, by the first pod bound that uses it. Its devices are then
// held by the claim's holder in the snapshot (placement.ClaimHolder), on its node, until
// the last pod using it is unbound; the next pod naming it allocates it afresh.

// bindPods binds a workload's pods on ov, all or none. The pods of a workload naming
// shared claims are bound as placement assumed them: a binding's devices include those
// of the shared claims it allocates, which pass to the claims' holders, and a pod naming
// a claim allocated already must be on the claim's node (else the plan is stale: a
// conflict, tried again next cycle).
func (s *Simulator) bindPods(ov *cluster.Overlay, w *api.Workload, bs []plan.Binding) error {
	if !namesSharedClaims(w) {
		changes := make([]cluster.Change, 0, len(bs))
		for _, b := range bs {
			changes = append(changes, cluster.Change{Op: cluster.OpBind, Pod: cluster.BoundPod{
				Ref: podRef(b), Node: b.Node, Requests: b.Requests, Devices: b.Assignment,
			}})
		}
		return ov.ApplyGroup(changes)
	}
	claims, err := s.deviceClaims()
	if err != nil {
		return err
	}
	mark := ov.Mark()
	for _, b := range bs {
		if err := bindClaimPod(ov, claims, w, b); err != nil {
			ov.Undo(mark)
			return err
		}
	}
	return nil
}

// bindClaimPod binds one pod of a workload naming shared claims.
func bindClaimPod(ov *cluster.Overlay, claims *placement.DeviceClaims, w *api.Workload, b plan.Binding) error {
	ps := podSetNamed(w, b.PodSet)
	if ps == nil {
		return fmt.Errorf("pod %s: workload %s has no pod set %q", b.Pod, w.ID(), b.PodSet)
	}
	i, ok := ov.NodeIndex(b.Node)
	if !ok {
		return fmt.Errorf("pod %s: node %q: not in the snapshot", b.Pod, b.Node)
	}
	return placement.AssumeWithClaims(ov, claims, w, ps, podRef(b), i, b.Requests, b.Assignment)
}

// releasedClaims are the removals of the holders of st's shared claims that no pod of
// another workload uses any more: st's pods are being unbound, so their claims'
// devices are free once the last user is gone. Every user of a claim is on its node.
func (s *Simulator) releasedClaims(st *wlState) []cluster.Change {
	var out []cluster.Change
	for _, key := range workloadSharedClaims(st.w) {
		bp, ok := s.snap.Pod(placement.ClaimHolder(key))
		if !ok {
			continue
		}
		if i, ok := s.snap.NodeIndex(bp.Node); ok && s.claimUsedOn(i, key, st.w.ID()) {
			continue
		}
		out = append(out, cluster.Change{Op: cluster.OpRemove, Pod: bp})
	}
	return out
}

// claimUsedOn reports whether a pod on node i of a workload other than except names
// shared claim key.
func (s *Simulator) claimUsedOn(i int, key string, except api.WorkloadID) bool {
	for _, ref := range s.snap.PodsOn(i) {
		if ref.Workload == except {
			continue
		}
		st := s.wls[ref.Workload]
		if st == nil {
			continue // an occupant or a claim holder
		}
		if ps := podSetNamed(st.w, ref.PodSet); ps != nil && slices.Contains(placement.SharedClaims(ps, st.w.Namespace), key) {
			return true
		}
	}
	return false
}

// deviceClaims compiles claims with the objects' DeviceClasses, as the engine does;
// built on first use (only workloads naming shared claims need it).
func (s *Simulator) deviceClaims() (*placement.DeviceClaims, error) {
	if s.claims == nil {
		classes, err := engine.CompileClasses(s.objs)
		if err != nil {
			return nil, fmt.Errorf("simulate: %w", err)
		}
		s.claims = placement.NewDeviceClaims(classes)
	}
	return s.claims, nil
}

// namesSharedClaims reports whether a pod set of w names a ResourceClaim directly.
func namesSharedClaims(w *api.Workload) bool {
	for i := range w.PodSets {
		for _, c := range w.PodSets[i].Claims {
			if c.Shared() {
				return true
			}
		}
	}
	return false
}

// workloadSharedClaims lists the shared claims w's pods name, sorted, each once.
func workloadSharedClaims(w *api.Workload) []string {
	var out []string
	for i := range w.PodSets {
		out = append(out, placement.SharedClaims(&w.PodSets[i], w.Namespace)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func podSetNamed(w *api.Workload, name string) *api.PodSet {
	for i := range w.PodSets {
		if w.PodSets[i].Name == name {
			return &w.PodSets[i]
		}
	}
	return nil
}
