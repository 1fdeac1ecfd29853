package engine

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// The GPU gates count a pod set naming a shared ResourceClaim as needing nothing: its
// requests count the claim in every pod, but its devices are taken once (or not at
// all when allocated already), so they overstate the need. Other pod sets count as
// before.
func TestGatesLeaveSharedClaimsOut(t *testing.T) {
	withClaim := func(shared bool) *api.Workload {
		w := gpuWorkload("a", 5, 0) // 2 pods of 5 GPUs (1 own + 4 of the claim)
		w.PodSets[0].Count = 2
		c := api.PodClaim{Name: "gpu", ResourceClaimTemplateName: "five"}
		if shared {
			c = api.PodClaim{Name: "gpu", ResourceClaimName: "pool"}
		}
		w.PodSets[0].Claims = []api.PodClaim{c}
		extra := w.PodSets[0]
		extra.Name, extra.Claims, extra.Requests = "side", nil, resources.Vector{resources.NvidiaGPU: 1}
		w.PodSets = append(w.PodSets, extra)
		return w
	}
	tests := []struct {
		name   string
		w      *api.Workload
		milli  resources.MilliGPU
		wholes []podNeed
	}{
		{name: "template claims count", w: withClaim(false), milli: 2*5000 + 2*1000, wholes: []podNeed{{gpus: 5, pods: 2}, {gpus: 1, pods: 2}}},
		{name: "shared claim left out", w: withClaim(true), milli: 2 * 1000, wholes: []podNeed{{gpus: 1, pods: 2}}},
	}
	for _, tc := range tests {
		if got := gpuNeed(tc.w); got != tc.milli {
			t.Errorf("%s: gpuNeed %d, want %d", tc.name, got, tc.milli)
		}
		got := gpuPodNeeds(tc.w)
		if len(got) != len(tc.wholes) {
			t.Fatalf("%s: gpuPodNeeds %v, want %v", tc.name, got, tc.wholes)
		}
		for i := range got {
			if got[i] != tc.wholes[i] {
				t.Errorf("%s: gpuPodNeeds %v, want %v", tc.name, got, tc.wholes)
			}
		}
	}
}
