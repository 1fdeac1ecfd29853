package placement_test

import (
	"fmt"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

func share(gpu int, milli resources.MilliGPU) devices.Assignment {
	return devices.Assignment{Devices: []devices.Device{{GPU: gpu, Kind: devices.ShareDevice, Milli: milli}}}
}

func whole(gpus ...int) devices.Assignment {
	var a devices.Assignment
	for _, g := range gpus {
		a.Devices = append(a.Devices, devices.Device{GPU: g, Kind: devices.WholeGPU, Milli: 1000})
	}
	return a
}

func cand(t *testing.T, node *gt.NodeWrapper, gpuFree []resources.MilliGPU, a devices.Assignment, mode devices.SharingMode, req resources.Vector) *placement.Candidate {
	t.Helper()
	n := node.Obj()
	p, err := placement.NewSimplePodRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	return &placement.Candidate{Node: &n, Free: n.Allocatable, GPUFree: gpuFree, GPUMode: mode, Assignment: a, Pod: p}
}

// Each scorer compares two candidates; wantFirstHigher says the first must outscore the
// second (and the reason why in the name).
func TestScorers(t *testing.T) {
	full := []resources.MilliGPU{1000, 1000, 1000, 1000}
	half := []resources.MilliGPU{0, 0, 1000, 1000}
	oneGPU := gt.Req("nvidia.com/gpu", "1")
	shapes := placement.NewShapeStats()
	for k := 0; k < 10; k++ {
		shapes.Observe(gt.Req("gantry.dev/gpu-milli", "500"))
		shapes.Observe(gt.Req("gantry.dev/gpu-milli", "700"))
	}
	cases := []struct {
		name            string
		scorer          placement.Scorer
		a, b            *placement.Candidate
		wantFirstHigher bool
	}{
		{"binpack prefers the used node", placement.Binpack{},
			cand(t, gt.MakeNode("a"), half, whole(2), devices.Exclusive, oneGPU), cand(t, gt.MakeNode("b"), full, whole(0), devices.Exclusive, oneGPU), true},
		{"spread prefers the empty node", placement.Spread{},
			cand(t, gt.MakeNode("a"), half, whole(2), devices.Exclusive, oneGPU), cand(t, gt.MakeNode("b"), full, whole(0), devices.Exclusive, oneGPU), false},
		{"prefer-no-schedule avoids tainted nodes", placement.PreferNoSchedule{},
			cand(t, gt.MakeNode("a"), full, whole(0), devices.Exclusive, oneGPU),
			cand(t, gt.MakeNode("b").Taint("x", "", corev1.TaintEffectPreferNoSchedule), full, whole(0), devices.Exclusive, oneGPU), true},
		{"islands: MIG slice prefers a MIG node over an untouched whole node", placement.WholeGPUIslands{},
			cand(t, gt.MakeNode("a"), []resources.MilliGPU{994}, devices.Assignment{Devices: []devices.Device{{Kind: devices.MIGDevice, Milli: 142}}}, devices.MIG, gt.Req("nvidia.com/mig-1g.10gb", "1")),
			cand(t, gt.MakeNode("b"), full, share(0, 142), devices.Fractional, gt.Req("gantry.dev/gpu-milli", "142")), true},
		{"islands: a fraction prefers a partly used exclusive node to an untouched one", placement.WholeGPUIslands{},
			cand(t, gt.MakeNode("a"), half, share(2, 500), devices.Exclusive, gt.Req("gantry.dev/gpu-milli", "500")),
			cand(t, gt.MakeNode("b"), full, share(0, 500), devices.Exclusive, gt.Req("gantry.dev/gpu-milli", "500")), true},
		{"fgd: a 500m pod fills a half-used GPU rather than splitting a fresh one", placement.Fragmentation{Shapes: shapes},
			cand(t, gt.MakeNode("a"), []resources.MilliGPU{500, 1000}, share(0, 500), devices.Fractional, gt.Req("gantry.dev/gpu-milli", "500")),
			cand(t, gt.MakeNode("b"), []resources.MilliGPU{1000, 1000}, share(0, 500), devices.Fractional, gt.Req("gantry.dev/gpu-milli", "500")), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sa, sb := tc.scorer.Score(tc.a), tc.scorer.Score(tc.b)
			for _, s := range []int64{sa, sb} {
				if s < 0 || s > placement.MaxScore {
					t.Fatalf("score %d outside [0, %d]", s, placement.MaxScore)
				}
			}
			if (sa > sb) != tc.wantFirstHigher {
				t.Fatalf("scores %d vs %d, want first higher = %v", sa, sb, tc.wantFirstHigher)
			}
		})
	}
}

func TestScorersForRejectsBadInput(t *testing.T) {
	for _, p := range []api.PlacementPolicy{
		{Scorers: []api.WeightedScorer{{Name: "tetris", Weight: 1}}},
		{Scorers: []api.WeightedScorer{{Name: "binpack", Weight: 0}}},
	} {
		if _, err := placement.ScorersFor(p, nil); err == nil {
			t.Fatalf("accepted %+v", p)
		}
	}
	if _, err := placement.NewPolicy("tetris", nil); err == nil {
		t.Fatal("NewPolicy accepted an unknown name")
	}
}

// With no shapes observed, fragmentation is neutral; shapes of whole GPUs make partly
// used GPUs count as fragment.
func TestShapeStats(t *testing.T) {
	s := placement.NewShapeStats()
	c := cand(t, gt.MakeNode("a"), []resources.MilliGPU{300, 1000}, whole(1), devices.Fractional, gt.Req("nvidia.com/gpu", "1"))
	if got := (placement.Fragmentation{Shapes: s}).Score(c); got != placement.MaxScore/2 {
		t.Fatalf("empty stats score = %d, want neutral %d", got, placement.MaxScore/2)
	}
	s.Observe(gt.Req("cpu", "4")) // CPU-only pods are not shapes
	s.Observe(gt.Req("nvidia.com/gpu", "1"))
	if s.Total() != 1 {
		t.Fatalf("total = %d, want 1", s.Total())
	}
	// Taking the only untouched GPU leaves 300m that no 1-GPU pod can use: fragmentation
	// stays 300m, but before it was 300m too (one untouched GPU remained) -> neutral;
	// after, nothing untouched remains, so the 300m is still fragment: Δ = 0.
	if got := (placement.Fragmentation{Shapes: s}).Score(c); got != placement.MaxScore/2 {
		t.Fatalf("score = %d, want %d", got, placement.MaxScore/2)
	}
}

// Without GPU shapes the default is bin-packing as before; once the workload's GPU shapes
// are known it is the fragmentation scorer (with taint avoidance), also for queues
// without a placement policy.
func TestDefaultScorersFor(t *testing.T) {
	names := func(ss []placement.WeightedScorer) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Scorer.Name())
		}
		return out
	}
	empty := placement.NewShapeStats()
	empty.Observe(gt.Req("cpu", "4")) // CPU-only pods are no GPU shapes
	withGPU := placement.NewShapeStats()
	withGPU.Observe(gt.Req("nvidia.com/gpu", "1"))
	legacy := names(placement.DefaultScorers())
	for _, tc := range []struct {
		name   string
		shapes *placement.ShapeStats
		want   []string
	}{
		{"no shapes", nil, legacy},
		{"CPU-only shapes", empty, legacy},
		{"GPU shapes", withGPU, []string{placement.ScoreFragmentation, placement.ScorePreferNoSched}},
	} {
		got := names(placement.DefaultScorersFor(tc.shapes))
		viaPolicy, err := placement.ScorersFor(api.PlacementPolicy{}, tc.shapes)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) || fmt.Sprint(names(viaPolicy)) != fmt.Sprint(tc.want) {
			t.Errorf("%s: DefaultScorersFor %v, ScorersFor %v (%v), want %v", tc.name, got, names(viaPolicy), err, tc.want)
		}
	}
}
