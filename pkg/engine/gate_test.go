package engine

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestGPUNeed(t *testing.T) {
	tests := []struct {
		name string
		w    *api.Workload
		want resources.MilliGPU // lower bound of milli-GPU needed at once
	}{
		{name: "cpu only", w: gt.MakeWorkload("ns", "a").CPU(1).Obj(), want: 0},
		{name: "2 pods x 4 GPUs", w: gpuWorkload("a", 4, 0), want: 4000},
		{name: "gang of 3 pods x 2 GPUs", w: func() *api.Workload { w := gpuWorkload("a", 2, 0); w.PodSets[0].Count = 3; return w }(), want: 6000},
		{name: "minCount 2 of 3", w: func() *api.Workload {
			w := gpuWorkload("a", 2, 0)
			w.PodSets[0].Count, w.PodSets[0].MinCount = 3, 2
			return w
		}(), want: 4000},
		{name: "MinMember: largest pod only", w: func() *api.Workload { w := gpuWorkload("a", 2, 0); w.PodSets[0].Count, w.MinMember = 3, 2; return w }(), want: 2000},
		{name: "gpu-milli fraction", w: func() *api.Workload {
			w := gt.MakeWorkload("ns", "a").CPU(1).Obj()
			w.PodSets[0].Requests = resources.Vector{resources.GPUMilli: 250}
			return w
		}(), want: 250},
		{name: "MIG profile counts 0 (safe bound)", w: func() *api.Workload {
			w := gt.MakeWorkload("ns", "a").CPU(1).Obj()
			w.PodSets[0].Requests = resources.Vector{"nvidia.com/mig-1g.10gb": 1}
			return w
		}(), want: 0},
	}
	for _, tc := range tests {
		if got := gpuNeed(tc.w); got != tc.want {
			t.Errorf("%s: need %d, want %d", tc.name, got, tc.want)
		}
	}
}

// countingPlacer counts Place calls of the real placer.
type countingPlacer struct {
	Placer
	places int
}

func (c *countingPlacer) Place(call PlaceCall) PlaceResult {
	c.places++
	return c.Placer.Place(call)
}

// TestGateSkipsPlacementWhenClusterLacksGPU: once the cluster's free GPUs are taken, a
// gang that needs more is rejected without a node scan, saying why.
func TestGateSkipsPlacementWhenClusterLacksGPU(t *testing.T) {
	snap := gpuNode(t)
	cp := &countingPlacer{Placer: NewPlacer(PlacerConfig{Seed: 1})}
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(100)
	first := pending(gpuWorkload("first", 6, 0), "cq")
	second := pending(gpuWorkload("second", 4, 1), "cq")
	p := mustEngine(t, Config{}, cp).Cycle(Input{Cycle: 1, Now: gt.Epoch(), Cluster: snap, Quota: q, Pending: []Pending{first, second}})
	if o := outcome(p, "ns/first"); o != "admitted" {
		t.Fatalf("first: %s, want admitted", o)
	}
	if cp.places != 1 {
		t.Errorf("placer asked %d times, want once (the second gang needs 4 GPUs, 2 are free)", cp.places)
	}
	r := p.Rejections[0]
	if r.Workload != "ns/second" || r.Reason != plan.ReasonQuotaFitsClusterDoesNot || r.Evidence == nil || r.Evidence.Place == nil ||
		r.Evidence.Place.Code != plan.ReasonNotEnoughFreeGPU || r.Evidence.Place.NeedGPU != 4000 || r.Evidence.Place.FreeGPU != 2000 {
		t.Errorf("rejection = %+v, evidence %+v; want QuotaFitsClusterDoesNot with %s (need 4000, 2000 free)", r, r.Evidence, plan.ReasonNotEnoughFreeGPU)
	}
}
