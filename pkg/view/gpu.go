package view

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// GPUEquivalent converts a GPU quota, usage or borrowing vector (summed over flavors)
// into GPU-equivalents in milli-GPU, the rule of the simulation report: whole GPUs
// count 1000 each and MIG instances their profile's share of a GPU. gantry.dev/gpu-milli
// stands for the same GPUs once more (admission charges every GPU request of a queue
// that quotas gpu-milli into it as well), so the figure is the larger of the two sums,
// never their total. Shared replicas are worth a share of a node's GPU that a queue's
// vector does not say: they are left out.
func GPUEquivalent(v resources.Vector) resources.MilliGPU {
	native := resources.SatMul(v[resources.NvidiaGPU], int64(resources.MilliPerGPU))
	for name, n := range v {
		if m := migMilli(name); m > 0 {
			native = resources.SatAdd(native, resources.SatMul(n, int64(m)))
		}
	}
	return resources.MilliGPU(max(native, v[resources.GPUMilli]))
}

// migMilli is one device of MIG resource name in milli-GPU; 0 for other resources and
// for ".shared" replicas.
func migMilli(name resources.Name) resources.MilliGPU {
	profile, ok := name.MIGProfile()
	if !ok || strings.HasSuffix(string(name), devices.SharedSuffix) {
		return 0
	}
	return devices.ProfileMilli(profile)
}

// GPUTotals sums a queue's rows over flavors and converts them into GPU-equivalents:
// its nominal quota, usage and borrowing.
func GPUTotals(rows []QuotaRow) (nominal, used, borrowed resources.MilliGPU) {
	n, u, b := resources.Vector{}, resources.Vector{}, resources.Vector{}
	for _, r := range rows {
		n[r.Resource] = resources.SatAdd(n[r.Resource], r.Nominal)
		u[r.Resource] = resources.SatAdd(u[r.Resource], r.Used)
		b[r.Resource] = resources.SatAdd(b[r.Resource], r.Borrowed)
	}
	return GPUEquivalent(n), GPUEquivalent(u), GPUEquivalent(b)
}

// WorkloadSize is a workload's gang: the pods it asks for and their GPU-equivalents,
// each pod's GPU requests valued as admission values them without a flavor (as the
// simulator counts a workload's GPUs).
func WorkloadSize(w *api.Workload) (pods int, gpu resources.MilliGPU) {
	for _, ps := range w.PodSets {
		pods += int(ps.Count)
		if m, err := admission.DefaultGPUAccounting(ps.Requests, nil); err == nil {
			gpu += m * resources.MilliGPU(ps.Count)
		}
	}
	return pods, gpu
}
