package devices

import (
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// AccountingMilli is a request's size in the common unit, gantry.dev/gpu-milli, on GPUs
// of model m shared as s: a whole GPU is 1000; a MIG instance its compute slices over the
// model's (3g on a 7-slice GPU = 428); a time-sliced or MPS replica 1000/replicas; a
// share its milli, or for a memory-only share its memory's part of the GPU, rounded up.
// Quota and fair share count every kind of GPU use in this one currency.
//
// nvidia.com/gpu means what the sharing mode advertises under it (whole GPUs, MIG-single
// instances, replicas), so s matters. A MIG profile m does not know is valued by its
// "<n>g" prefix on a 7-slice geometry.
func AccountingMilli(r Request, m Model, s Sharing) resources.MilliGPU {
	var sum resources.MilliGPU
	sum += resources.MilliGPU(r.Units) * unitMilli(m, s)
	sum += resources.MilliGPU(r.Shared) * replicaMilli(s.Replicas)
	for _, mc := range r.MIG {
		sum += resources.MilliGPU(mc.Count) * profileMilli(m, mc.Profile)
	}
	if r.IsFraction() {
		g := gpuState{model: &m}
		sum += g.shareMilli(r)
	}
	return sum
}

// unitMilli is what one nvidia.com/gpu unit is worth under s.
func unitMilli(m Model, s Sharing) resources.MilliGPU {
	switch s.EffectiveMode() {
	case TimeSlicing, MPS:
		if !s.RenameByDefault {
			return replicaMilli(s.Replicas)
		}
	case MIG:
		if s.EffectiveMIGStrategy() == MIGSingle {
			if layouts, err := m.ResolveLayout(s, 1); err == nil && len(layouts[0]) > 0 {
				return profileMilli(m, layouts[0][0].Profile)
			}
		}
	}
	return resources.MilliPerGPU
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
