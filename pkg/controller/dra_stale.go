package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/placement"
)

// A gang whose pods name a shared ResourceClaim that is allocated when the gang is
// placed goes to the claim's node and takes none of the claim's devices: its slots
// rely on that allocation staying. If it goes before the gang binds (the pods using it
// end first and kube-controller-manager clears it), or the claim is allocated on
// another node meanwhile, no pod of the gang can allocate the claim or use it there,
// and planClaims would wait (WaitingForResourceClaims) or refuse (ResourceClaimRefused)
// for ever. A scheduler places such a gang again: requeueStaleClaims drops its
// admission and queues it through the eviction path (ReasonStaleClaim). Nothing of it
// runs, so no pod is evicted: a Job is suspended again, as any unadmitted one, and a
// plain pod gang's pods stay unbound. Its quota and slots go back with the admission,
// and releaseClaims drops any reservation written for its pods.
//
// Never stale: a gang with a pod bound (its pods allocated the claim, or use it), and
// a claim from a template, however long it is missing (kube-controller-manager creates
// it once the pod exists).

// sharedClaimState is where one shared claim stands for the staleness decision.
type sharedClaimState struct {
	// allocatedOn is the node of its status.allocation; "" when it is not allocated.
	allocatedOn string
	// heldOn is the node its holder is bound on in the pass's cycle state: the node it
	// is allocated on, or the node an admitted pod's slot (of any gang) allocates it
	// on (assumeAllocating); "" when neither.
	heldOn string
}

// gangClaimPlan is what the staleness decision reads of one admitted gang.
type gangClaimPlan struct {
	model      *api.Workload // the pod sets' claims, resolved
	placements []v1alpha1.PodPlacement
	bound      bool // a pod of the gang is, or was, bound
}

// staleClaim says why the gang's placement relies on a shared claim that its slot's
// node no longer has, if it does. claims are the shared claims by "namespace/name";
// one not there (not in the cache, or allocated to no one node) is not judged.
func (g gangClaimPlan) staleClaim(claims map[string]sharedClaimState) (string, bool) {
	if g.bound {
		return "", false
	}
	for _, p := range g.placements {
		ps := modelPodSet(g.model, p.PodSet)
		if ps == nil {
			continue
		}
		for _, key := range placement.SharedClaims(ps, g.model.Namespace) {
			st, ok := claims[key]
			if !ok {
				continue
			}
			if why, stale := st.staleFor(key, p); stale {
				return why, true
			}
		}
	}
	return "", false
}

// staleFor says why slot p cannot use shared claim key where it is placed: the claim
// is allocated on another node, or it is not allocated and no admitted pod allocates it
// on p's node.
func (st sharedClaimState) staleFor(key string, p v1alpha1.PodPlacement) (string, bool) {
	switch {
	case st.allocatedOn == p.Node:
		return "", false
	case st.allocatedOn != "":
		return fmt.Sprintf("ResourceClaim %s is allocated on node %s; slot %s, placed to use it, is on node %s",
			key, st.allocatedOn, slotName(p), p.Node), true
	case st.heldOn == p.Node:
		return "", false // an admitted pod's slot there allocates it
	case st.heldOn != "":
		return fmt.Sprintf("ResourceClaim %s is to be allocated on node %s; slot %s, placed to use it, is on node %s",
			key, st.heldOn, slotName(p), p.Node), true
	default:
		return fmt.Sprintf("ResourceClaim %s, which slot %s on node %s was placed to use, is no longer allocated and no admitted pod allocates it",
			key, slotName(p), p.Node), true
	}
}

// requeueStaleClaims requeues every admitted gang, none of whose pods is bound, placed
// against a shared claim its slot's node no longer has (see above). cs is the pass's
// state, read before: it tells where the claims' holders are. It reports whether any
// gang was requeued (their objects in w are then unadmitted; the pass reads its state
// again).
func (ctl *Controller) requeueStaleClaims(ctx context.Context, w *world, cs *cycleState, now time.Time) bool {
	if w.dra == nil || len(w.dra.claims) == 0 {
		return false // a claim not in the cache is not judged (staleClaim)
	}
	if _, err := w.dra.compiledClasses(); err != nil {
		return false // no holder is assumed without the classes (assumeAllocating): nothing to judge by
	}
	claims := map[string]sharedClaimState{}
	requeued := false
	for _, wl := range ptrs(w.workloads) {
		g, ok := ctl.claimPlanOf(w, cs, wl)
		if !ok {
			continue
		}
		why, stale := g.staleClaim(sharedClaimStates(w, cs, g.model, claims))
		if !stale {
			continue
		}
		ctl.log.Info("gang placed against a shared claim that moved; requeued", "workload", wlKey(wl), "reason", why)
		if err := ctl.evict(ctx, wl, nil, ReasonStaleClaim, why, now); err != nil {
			ctl.retry = true
			ctl.log.Info("requeue not finished, retrying", "workload", wlKey(wl), "reason", err.Error())
			continue
		}
		requeued = true
	}
	return requeued
}

// claimPlanOf is the staleness input of wl; false when wl is not judged: not admitted,
// finished, unreadable, under a preemption notice (evictDue's), with binds in flight,
// or naming no shared claim.
func (ctl *Controller) claimPlanOf(w *world, cs *cycleState, wl *v1alpha1.Workload) (gangClaimPlan, bool) {
	t := cs.byID[api.WorkloadID(wlKey(wl))]
	if t == nil || t.obj != wl || t.model == nil || t.err != nil || !t.admitted() || t.finished() || t.noticed() {
		return gangClaimPlan{}, false
	}
	if !namesSharedClaim(t.model) || ctl.binds.inFlight(wlKey(wl)) {
		return gangClaimPlan{}, false
	}
	bound := w.anyPodBound(wl)
	for _, p := range ctl.binds.view(w.podsOf(wl)) {
		bound = bound || p.Spec.NodeName != "" // bound a moment ago, not in the informer yet
	}
	return gangClaimPlan{model: t.model, placements: wl.Status.Admission.Placements, bound: bound}, true
}

// namesSharedClaim reports whether a pod set of m names a shared claim.
func namesSharedClaim(m *api.Workload) bool {
	for i := range m.PodSets {
		if len(placement.SharedClaims(&m.PodSets[i], m.Namespace)) > 0 {
			return true
		}
	}
	return false
}

// sharedClaimStates adds to claims (kept across the pass's gangs) the state of every
// shared claim m's pod sets name, and returns it: the allocation from the claim cache,
// the holder from the cycle state. A claim not in the cache, or allocated to no one
// node, is left out (not judged).
func sharedClaimStates(w *world, cs *cycleState, m *api.Workload, claims map[string]sharedClaimState) map[string]sharedClaimState {
	for i := range m.PodSets {
		for _, key := range placement.SharedClaims(&m.PodSets[i], m.Namespace) {
			if _, done := claims[key]; done {
				continue
			}
			claim := w.dra.claims[key]
			if claim == nil {
				continue
			}
			var st sharedClaimState
			if a := claim.Status.Allocation; a != nil {
				node, ok := allocationNode(*a)
				if !ok {
					continue
				}
				st.allocatedOn = node
			}
			if bp, ok := cs.cluster.Pod(placement.ClaimHolder(key)); ok {
				st.heldOn = bp.Node
			}
			claims[key] = st
		}
	}
	return claims
}
