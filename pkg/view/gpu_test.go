package view

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestGPUEquivalent(t *testing.T) {
	mig1g := resources.MIGResource("1g.10gb")
	mig3g := resources.MIGResource("3g.40gb")
	cases := []struct {
		name string
		v    resources.Vector
		want resources.MilliGPU
	}{
		{"whole GPUs", resources.Vector{resources.NvidiaGPU: 4}, 4000},
		{"MIG at its share", resources.Vector{mig1g: 7}, 7 * devices.ProfileMilli("1g.10gb")},
		{"whole and MIG add up", resources.Vector{resources.NvidiaGPU: 2, mig3g: 1}, 2000 + devices.ProfileMilli("3g.40gb")},
		{"gpu-milli stands for the same GPUs", resources.Vector{resources.NvidiaGPU: 2, resources.GPUMilli: 2000}, 2000},
		{"gpu-milli alone", resources.Vector{resources.GPUMilli: 2500}, 2500},
		{"shared replicas left out", resources.Vector{resources.NvidiaGPUShared: 4}, 0},
		{"no GPUs", resources.Vector{resources.CPU: 64000}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := GPUEquivalent(c.v); got != c.want {
				t.Errorf("GPUEquivalent(%v) = %d, want %d", c.v, got, c.want)
			}
		})
	}
}

func TestGPUTotalsSumFlavors(t *testing.T) {
	rows := []QuotaRow{
		{Flavor: "h100", Resource: resources.NvidiaGPU, Nominal: 16, Used: 20, Borrowed: 4},
		{Flavor: "a100", Resource: resources.NvidiaGPU, Nominal: 8, Used: 2},
		{Flavor: "a100", Resource: resources.CPU, Nominal: 64000, Used: 1000},
	}
	n, u, b := GPUTotals(rows)
	if n != 24000 || u != 22000 || b != 4000 {
		t.Errorf("GPUTotals = %d, %d, %d; want 24000, 22000, 4000", n, u, b)
	}
}

func TestWorkloadSize(t *testing.T) {
	w := &api.Workload{PodSets: []api.PodSet{
		{Name: "master", Count: 1, Requests: resources.Vector{resources.NvidiaGPU: 8}},
		{Name: "worker", Count: 3, Requests: resources.Vector{resources.NvidiaGPU: 8}},
		{Name: "sidecar", Count: 2, Requests: resources.Vector{resources.CPU: 1000}},
	}}
	if pods, gpu := WorkloadSize(w); pods != 6 || gpu != 32000 {
		t.Errorf("WorkloadSize = %d pods, %d milli-GPU; want 6, 32000", pods, gpu)
	}
}
