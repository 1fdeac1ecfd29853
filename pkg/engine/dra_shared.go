package engine

import "github.com/gantry-sched/gantry/pkg/api"

// gatesSkip reports whether the GPU gates (gpuNeed, gpuPodNeeds: necessary conditions
// checked before placement, and what wakes a parked workload) leave pod set ps out. A
// pod set naming a shared ResourceClaim has that claim's devices in every pod's
// requests (as quota counts them), but they are taken once, and not at all when the
// claim is allocated already (placement's claim holders): its requests overstate
// what it needs of free GPUs, and a gate must never overstate, or a gang that fits
// would be refused or never woken. Counting nothing for it only asks placement more.
func gatesSkip(ps *api.PodSet) bool {
	for _, c := range ps.Claims {
		if c.Shared() {
			return true
		}
	}
	return false
}
