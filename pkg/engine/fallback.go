package engine

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// maxFallbacks bounds how many flavors one workload may fall back from per cycle.
const maxFallbacks = 4

// assignedFlavors lists the flavors an assignment uses that have node labels, sorted.
// Only those are excluded on fallback: a flavor without labels matches every node, so
// excluding it would not move the gang anywhere else.
func assignedFlavors(a admission.Assignment, known map[string]api.ResourceFlavor) []string {
	set := map[string]bool{}
	for _, ps := range a.PodSets {
		for _, r := range ps.Resources {
			set[r.Flavor] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		if f, ok := known[n]; ok && len(f.NodeLabels) > 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// excludedSet turns the flavor names into the set admission.Quota.AssignWithout takes.
func excludedSet(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}
