package engine

import (
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// freeGPU is the cycle's running total of free GPU capacity in milli-GPU over all nodes
// of the overlay: an upper bound of what any placement can use (flavors, topology and
// per-GPU fit only lower it). Within a cycle capacity is only taken (admissions), so it
// is counted once and decreased as gangs are admitted; what-ifs (preemption checks,
// reservation walks) are undone before anything else reads it.
func (c *cycle) countFreeGPU() { c.freeGPU = c.ov.FreeGPUMilli() }

// takeGPU charges admitted bindings to the free total.
func (c *cycle) takeGPU(bs []plan.Binding) {
	for _, b := range bs {
		c.freeGPU -= b.Assignment.MilliGPU()
	}
}

// gpuNeed is a lower bound of the milli-GPU a gang needs on the cluster at once: whole
// GPUs (nvidia.com/gpu) and Gantry's gpu-milli of the gang's pods. Other GPU resources
// (MIG profiles, shared replicas) count 0, which keeps the bound safe. With MinMember
// the gang may mix pod sets, so only the largest single pod counts.
func gpuNeed(w *api.Workload) resources.MilliGPU {
	var total, largest resources.MilliGPU
	for _, ps := range w.PodSets {
		if gatesSkip(&ps) {
			continue // shared claims: dra_shared.go
		}
		per := resources.MilliGPU(ps.Requests[resources.NvidiaGPU])*resources.MilliPerGPU +
			resources.MilliGPU(ps.Requests[resources.GPUMilli])
		total += per * resources.MilliGPU(ps.GangCount())
		if per > largest {
			largest = per
		}
	}
	if w.MinMember > 0 {
		return largest
	}
	return total
}

// lacksGPU reports, with the reason (NotEnoughFreeGPU), when the cluster cannot hold the
// gang's GPUs even if every free unit were usable: placement is not asked then (every
// node would be scanned for nothing).
func (c *cycle) lacksGPU(w *api.Workload) (PlaceResult, bool) {
	need := gpuNeed(w)
	if need == 0 || need <= c.freeGPU {
		return PlaceResult{}, false
	}
	return PlaceResult{Failure: &plan.PlaceFailure{Code: plan.ReasonNotEnoughFreeGPU, NeedGPU: need, FreeGPU: c.freeGPU}}, true
}

// lacksRoom reports, with the reason (NoRoomForGang), when the free whole GPUs cannot
// host p's whole-GPU pods even if every free GPU were usable (capacity_wake.go's
// condition): placement is not asked then (it would scan every node and diagnose each
// for nothing). The view is shared until the cycle admits a workload.
func (c *cycle) lacksRoom(p Pending) (PlaceResult, bool) {
	needs := p.wholeGPUNeeds()
	if needs == nil {
		return PlaceResult{}, false
	}
	switch {
	case c.room == nil:
		c.room, c.roomVersion = newOverlayGPUView(c.ov, &c.e.gpuScratch), c.quotaVersion
	case c.roomVersion != c.quotaVersion:
		c.room.restart(c.ov)
		c.roomVersion = c.quotaVersion
	}
	room, short := c.room.shortOf(needs)
	if !short {
		return PlaceResult{}, false
	}
	return PlaceResult{Failure: &plan.PlaceFailure{Code: plan.ReasonNoRoomForGang, Room: &room}}, true
}

// diagnosed is why, or, when the room gate refused the gang without asking placement
// (NoRoomForGang), placement's own failure with its per-node diagnosis: a rejection is
// explained node by node (which label, taint or device stops each), a reservation or a
// preemption needs only the code.
func (c *cycle) diagnosed(p Pending, a admission.Assignment, why *plan.PlaceFailure) *plan.PlaceFailure {
	if why.Code != plan.ReasonNoRoomForGang {
		return why
	}
	key := c.shapeOf(p) + flavorKey(a)
	res, failed := c.failedUnder(key, nil) // the same shape failed placement this cycle
	if !failed {
		mark := c.ov.Mark()
		res = c.e.placer.Place(c.call(p.Workload, a))
		c.ov.Undo(mark)
		if res.OK || res.Failure == nil {
			return why
		}
		c.recordFailure(key, nil, res)
	}
	return res.Failure
}
