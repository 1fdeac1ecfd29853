package admission

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// podSetNeed is what one pod set asks of a ClusterQueue, split by resource group.
type podSetNeed struct {
	ps *api.PodSet
	// groups maps a resource group index to the covered resources the pod set needs
	// from it, sorted.
	groups map[int][]resources.Name
	// perPod is the pod's request with excluded resources removed.
	perPod resources.Vector
	// gpuMilli reports whether the pod's GPU requests count into gantry.dev/gpu-milli.
	gpuMilli bool
}

// needs splits a pod set's per-pod requests over cq's resource groups. GPU requests of
// any form count into gantry.dev/gpu-milli when a group covers it; any other resource no
// group covers makes the workload inadmissible in cq (ResourceNotCovered).
func (s *structure) needs(cq nodeID, ps *api.PodSet) (podSetNeed, error) {
	cover := s.covered[cq]
	need := podSetNeed{ps: ps, groups: map[int][]resources.Name{}, perPod: resources.Vector{}}
	milliGroup, coversMilli := cover[resources.GPUMilli]
	for _, r := range ps.Requests.Names() {
		if s.excluded(r) || ps.Requests[r] <= 0 {
			continue
		}
		need.perPod[r] = ps.Requests[r]
		if r.IsGPU() && coversMilli {
			need.gpuMilli = true
			if r != resources.GPUMilli {
				if g, ok := cover[r]; ok { // quota on the resource itself as well
					need.groups[g] = append(need.groups[g], r)
				}
			}
			continue
		}
		g, ok := cover[r]
		if !ok {
			return need, fmt.Errorf("pod set %q requests %s, which no resource group of clusterqueue %q covers", ps.Name, r, s.nodes[cq].name)
		}
		need.groups[g] = append(need.groups[g], r)
	}
	if need.gpuMilli {
		need.groups[milliGroup] = append(need.groups[milliGroup], resources.GPUMilli)
		sort.Slice(need.groups[milliGroup], func(i, j int) bool { return need.groups[milliGroup][i] < need.groups[milliGroup][j] })
	}
	return need, nil
}

func (s *structure) excluded(r resources.Name) bool {
	for _, p := range s.exclude {
		if strings.HasPrefix(string(r), p) {
			return true
		}
	}
	return false
}

// amount is the pod set's total request of r in flavor f (count × per pod), converting
// GPU requests into the common unit for gantry.dev/gpu-milli.
func (s *structure) amount(need podSetNeed, r resources.Name, flavor *api.ResourceFlavor) (resources.Amount, error) {
	perPod := need.perPod[r]
	if r == resources.GPUMilli && need.gpuMilli {
		gpu := resources.Vector{}
		for k, v := range need.perPod {
			if k.IsGPU() {
				gpu[k] = v
			}
		}
		m, err := s.acct(gpu, flavor)
		if err != nil {
			return 0, err
		}
		perPod = resources.Amount(m)
	}
	return resources.SatMul(perPod, int64(need.ps.Count)), nil
}

// sortedGroups returns the group indexes of a need in order.
func (n podSetNeed) sortedGroups() []int {
	out := make([]int, 0, len(n.groups))
	for g := range n.groups {
		out = append(out, g)
	}
	sort.Ints(out)
	return out
}
