package manifest

import "github.com/gantry-sched/gantry/pkg/api"

// volcanoGang sets a workload's gang the way Volcano's gang plugin counts it: minMember
// pods in all and, when minMember is at least the sum of the per-task minimums (mins, one
// per pod set, 0 for none), each task's minimum too. Volcano skips the per-task check
// when minMember is below that sum, and then any minMember pods make the gang.
//
// Gantry states a gang either per pod set (MinCount) or as a count taken from the pod
// sets in order (MinMember). The first is exact when every pod set keeps at least one
// pod in the gang: the pods minMember asks beyond the minimums go first to the pod sets
// without one, then to the pod sets in order. Otherwise MinMember is used. minMember must
// be positive and at most the workload's pods (callers check both).
func volcanoGang(w *api.Workload, minMember int32, mins []int32) {
	// int64 throughout: pod counts of several sets may add up beyond an int32.
	var sum int64
	for _, m := range mins {
		sum += int64(m)
	}
	w.MinMember = 0
	for i := range w.PodSets {
		w.PodSets[i].MinCount = 0
	}
	if int64(minMember) < sum {
		w.MinMember = minMember
		return
	}
	gang := make([]int64, len(mins))
	for i, m := range mins {
		gang[i] = int64(m)
	}
	extra := int64(minMember) - sum
	for i, ps := range w.PodSets { // one pod to each set without a minimum
		if extra > 0 && gang[i] == 0 && ps.Count > 0 {
			gang[i], extra = 1, extra-1
		}
	}
	for i, ps := range w.PodSets {
		add := min(extra, int64(ps.Count)-gang[i])
		gang[i], extra = gang[i]+add, extra-add
	}
	for i, ps := range w.PodSets {
		if gang[i] == 0 && ps.Count > 0 {
			w.MinMember = minMember
			return
		}
	}
	for i, ps := range w.PodSets {
		if gang[i] < int64(ps.Count) {
			w.PodSets[i].MinCount = int32(gang[i])
		}
	}
}

// volcanoTopology reads Volcano's networkTopology (a vcjob's or a PodGroup's) with
// Volcano's defaults: mode hard. highestTierAllowed counts the Topology's levels from the
// narrowest (tier 1); highestTierName names a tier by a HyperNode's tierName and is
// turned into that tier once every HyperNode is read (loader.trackVolcano). Returns nil
// when the spec is invalid.
func volcanoTopology(nt vcNetworkTopology, path string, c errs) *api.TopologyRequest {
	t := &api.TopologyRequest{}
	ok := true
	switch nt.Mode {
	case "", "hard":
		t.Mode = api.TopologyRequired
	case "soft":
		t.Mode = api.TopologyPreferred
	default:
		c.add(path+".mode", "unknown mode %q: want hard or soft", nt.Mode)
		ok = false
	}
	if nt.HighestTierAllowed != nil {
		if *nt.HighestTierAllowed < 0 {
			c.add(path+".highestTierAllowed", "%d is negative", *nt.HighestTierAllowed)
			ok = false
		}
		t.HighestTierAllowed = *nt.HighestTierAllowed
	}
	if nt.HighestTierName != "" && nt.HighestTierAllowed != nil {
		c.add(path+".highestTierName", "set either highestTierAllowed or highestTierName, not both")
		ok = false
	}
	if !ok {
		return nil
	}
	return t
}
