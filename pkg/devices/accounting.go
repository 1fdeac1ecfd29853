package devices

import (
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// AccountingMilli is a request's size in the common unit, gantry.dev/gpu-milli, on GPUs
// of model m shared as s: a whole GPU is 1000; a MIG instance its compute slices over the
// model's (3g on a 7-slice GPU = 428); a time-sliced or MPS replica 1000/replicas, and a
// replica of a time-sliced MIG instance the instance's milli/replicas (all rounded
// down, as the node charges them); a share its milli, or for a memory-only share its
// memory's part of the GPU, rounded up. Quota and fair share count every kind of GPU use
// in this one currency.
//
// nvidia.com/gpu means what the sharing mode advertises under it (whole GPUs, MIG-single
// instances, replicas), so s matters. Under a per-resource config that replicates only
// some devices of a resource, a unit is valued as a replica (what most of its devices
// are; the assignment then carries the exact figure). A MIG profile m does not know is
// valued by its "<n>g" prefix on a 7-slice geometry.
func AccountingMilli(r Request, m Model, s Sharing) resources.MilliGPU {
	var sum resources.MilliGPU
	sum += resources.MilliGPU(r.Units) * unitMilli(m, s, resources.NvidiaGPU)
	sum += resources.MilliGPU(r.Shared) * unitMilli(m, s, resources.NvidiaGPUShared)
	for _, mc := range r.MIG {
		sum += resources.MilliGPU(mc.Count) * splitMilli(profileMilli(m, mc.Profile), replicasUnder(s, resources.MIGResource(mc.Profile), mc.Resource()))
	}
	if r.IsFraction() {
		g := gpuState{gpuStatic: &gpuStatic{model: &m}}
		sum += g.shareMilli(r)
	}
	return sum
}

// unitMilli is what one unit advertised as name (nvidia.com/gpu or nvidia.com/gpu.shared)
// is worth under s.
func unitMilli(m Model, s Sharing, name resources.Name) resources.MilliGPU {
	switch s.EffectiveMode() {
	case TimeSlicing, MPS:
		if replicas := replicasUnder(s, resources.NvidiaGPU, name); replicas > 0 {
			return replicaMilli(replicas)
		}
		if name == resources.NvidiaGPUShared && len(s.Resources) == 0 {
			return replicaMilli(s.Replicas) // GFD's labels do not tell renameByDefault
		}
	case MIG:
		if s.EffectiveMIGStrategy() == MIGSingle {
			if layouts, err := m.ResolveLayout(s, 1); err == nil && len(layouts[0]) > 0 {
				return splitMilli(profileMilli(m, layouts[0][0].Profile), replicasUnder(s, resources.NvidiaGPU, name))
			}
		}
	}
	return resources.MilliPerGPU
}

// replicasUnder is how many replicas s makes of each device of resource when they are
// advertised as name; 0 when none are.
func replicasUnder(s Sharing, resource, name resources.Name) int {
	entries := s.ReplicatedResources()
	if s.EffectiveMode() == MIG {
		entries = s.Resources
	}
	for _, r := range entries {
		if r.Name == resource && s.AdvertisedName(r) == name {
			return r.Replicas
		}
	}
	return 0
}

// splitMilli is one of replicas equal parts of milli, rounded down (replicas 0: whole).
func splitMilli(milli resources.MilliGPU, replicas int) resources.MilliGPU {
	if replicas < 1 {
		return milli
	}
	return milli / resources.MilliGPU(replicas)
}

func profileMilli(m Model, profile string) resources.MilliGPU {
	if p, ok := m.Profile(profile); ok {
		return p.Milli(m.MIG)
	}
	n, err := strconv.Atoi(strings.SplitN(profile, "g", 2)[0])
	if err != nil || n < 0 || n > 7 {
		return 0
	}
	return resources.MilliGPU(n) * resources.MilliPerGPU / 7
}

// AccountingVector returns a copy of a pod's per-pod requests with gantry.dev/gpu-milli
// set to the request's AccountingMilli, so quota can count every GPU kind in one unit
// next to the native resource names. Requests without GPUs come back unchanged.
func AccountingVector(v resources.Vector, m Model, s Sharing) (resources.Vector, error) {
	r, err := ParseRequest(v)
	if err != nil {
		return nil, err
	}
	out := v.Clone()
	if !r.IsZero() {
		out[resources.GPUMilli] = resources.Amount(AccountingMilli(r, m, s))
	}
	return out, nil
}
