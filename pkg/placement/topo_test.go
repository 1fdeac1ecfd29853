package placement_test

import (
	"math/rand"
	"reflect"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
)

func nodesOf(pl placement.Placement) map[string]int {
	out := map[string]int{}
	for _, p := range pl.Pods {
		out[p.Node]++
	}
	return out
}

func racksOf(ov *cluster.Overlay, pl placement.Placement) map[string]int {
	out := map[string]int{}
	for _, p := range pl.Pods {
		i, _ := ov.NodeIndex(p.Node)
		out[ov.Node(i).Labels[rack]]++
	}
	return out
}

// Topology requests, one table: each case places one workload of 8-GPU pods on racks of
// the given sizes; want fields give the outcome.
func TestTopologyRequests(t *testing.T) {
	eight := gt.Req("nvidia.com/gpu", "8")
	cases := []struct {
		name      string
		racks     []int // nodes per rack r0, r1, ...
		pods      int32
		topo      *api.TopologyRequest
		wantFit   bool
		wantRacks int // number of racks used when it fits
		wantRack  string
	}{
		{"required picks the best-fitting rack", []int{4, 2, 3}, 2, &api.TopologyRequest{Mode: api.TopologyRequired, Level: rack}, true, 1, "r1"},
		{"required fails when no rack is big enough", []int{2, 2}, 3, &api.TopologyRequest{Mode: api.TopologyRequired, Level: rack}, false, 0, ""},
		{"preferred falls back to several racks", []int{2, 2}, 3, &api.TopologyRequest{Mode: api.TopologyPreferred, Level: rack}, true, 2, ""},
		{"preferred stays in one rack when it can", []int{2, 3}, 3, &api.TopologyRequest{Mode: api.TopologyPreferred, Level: rack}, true, 1, "r1"},
		{"volcano hard tier 2 allows one rack", []int{1, 3}, 2, &api.TopologyRequest{Mode: api.TopologyRequired, HighestTierAllowed: 2}, true, 1, "r1"},
		{"volcano hard tier 1 is the narrowest listed level (rack)", []int{1, 1}, 2, &api.TopologyRequest{Mode: api.TopologyRequired, HighestTierAllowed: 1}, false, 0, ""},
		{"slices of 2 pods each share a rack", []int{2, 2, 1}, 4, &api.TopologyRequest{SliceLevel: rack, SliceSize: 2}, true, 2, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []cluster.Node
			for r, n := range tc.racks {
				nodes = append(nodes, racks(n, "r"+string(rune('0'+r)))...)
			}
			ov := snap(t, []api.Topology{{Meta: api.Meta{Name: "t"}, Levels: []string{rack}}}, nodes...).Overlay()
			w := gt.MakeWorkload("ns", "w").PodSet("main", tc.pods).Requests(eight).Obj()
			w.PodSets[0].Topology = tc.topo
			pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
			if (d == nil) != tc.wantFit {
				t.Fatalf("fit = %v, want %v (%s)", d == nil, tc.wantFit, d)
			}
			if !tc.wantFit {
				if d.Topology == "" {
					t.Fatalf("no topology reason in %s", d)
				}
				return
			}
			got := racksOf(ov, pl)
			if len(got) != tc.wantRacks || (tc.wantRack != "" && got[tc.wantRack] == 0) {
				t.Fatalf("racks used = %v, want %d (%q)", got, tc.wantRacks, tc.wantRack)
			}
			if tc.topo.SliceSize > 0 {
				for r, n := range got {
					if n%int(tc.topo.SliceSize) != 0 {
						t.Fatalf("rack %s holds %d pods: a slice was split", r, n)
					}
				}
			}
		})
	}
}

// MinCount pods form the gang; extra pods are placed while they fit.
func TestGangMinCountAndExtras(t *testing.T) {
	ov := snap(t, nil, gt.MakeNode("a").GPUs("H100", 8).Obj(), gt.MakeNode("b").GPUs("H100", 8).Obj()).Overlay()
	w := gt.MakeWorkload("ns", "elastic").PodSet("workers", 5).Requests(gt.Req("nvidia.com/gpu", "4")).MinCount(3).Obj()
	pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
	if d != nil {
		t.Fatal(d)
	}
	if len(pl.Pods) != 4 { // 16 GPUs hold 4 pods of 4: 3 gang + 1 extra
		t.Fatalf("placed %d pods, want 4", len(pl.Pods))
	}
	w2 := gt.MakeWorkload("ns", "rigid").PodSet("workers", 2).Requests(gt.Req("nvidia.com/gpu", "1")).Obj()
	if _, d := placement.PlaceWorkload(ov, w2, nil, placement.Options{}); d == nil || d.GangSize != 2 {
		t.Fatalf("gang of 2 placed on a full cluster, or wrong size: %v", d)
	}
}

// A gang over two pod sets is all or nothing: the second set not fitting undoes the first.
func TestGangAcrossPodSetsAllOrNothing(t *testing.T) {
	ov := snap(t, nil, gt.MakeNode("a").GPUs("H100", 8).Obj()).Overlay()
	w := gt.MakeWorkload("ns", "ray").PodSet("head", 1).Requests(gt.Req("cpu", "4")).PodSet("workers", 3).Requests(gt.Req("nvidia.com/gpu", "4")).Obj()
	_, d := placement.PlaceWorkload(ov, w, nil, placement.Options{})
	if d == nil || d.PodSet != "workers" || d.Placed != 3 || d.GangSize != 4 {
		t.Fatalf("diagnosis = %v", d)
	}
	if len(ov.PodsOn(0)) != 0 || len(ov.Changes()) != 0 {
		t.Fatal("failed gang left pods on the overlay")
	}
}

// The same seed gives the same placement; ties between identical nodes use the seed.
func TestDeterministicTieBreaks(t *testing.T) {
	var nodes []cluster.Node
	for k := 0; k < 20; k++ {
		nodes = append(nodes, gt.MakeNode("n"+string(rune('a'+k))).GPUs("H100", 8).Obj())
	}
	s := snap(t, nil, nodes...)
	w := gt.MakeWorkload("ns", "w").PodSet("main", 3).Requests(gt.Req("nvidia.com/gpu", "8")).Obj()
	place := func(seed int64) map[string]int {
		pl, d := placement.PlaceWorkload(s.Overlay(), w, nil, placement.Options{Rand: rand.New(rand.NewSource(seed))})
		if d != nil {
			t.Fatal(d)
		}
		return nodesOf(pl)
	}
	if a, b := place(7), place(7); !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different placements: %v vs %v", a, b)
	}
	differs := false
	for seed := int64(1); seed < 10 && !differs; seed++ {
		differs = !reflect.DeepEqual(place(seed), place(seed+100))
	}
	if !differs {
		t.Fatal("ties never broken differently across seeds: the random is not used")
	}
}

// Single-pod policies choose a feasible node without changing the overlay.
func TestPolicies(t *testing.T) {
	s := snap(t, nil, gt.MakeNode("a").GPUs("T4", 2).Obj(), gt.MakeNode("b").GPUs("T4", 1).Obj())
	p, err := placement.NewSimplePodRequest(gt.Req("nvidia.com/gpu", "2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{placement.PolicyRandom, placement.PolicyBestFit, placement.PolicyPacking, placement.PolicyFGD, "spread"} {
		pol, err := placement.NewPolicy(name, placement.NewShapeStats())
		if err != nil {
			t.Fatal(err)
		}
		ov := s.Overlay()
		c, ok := pol.Choose(ov, p, rand.New(rand.NewSource(1)))
		if !ok || c.NodeName != "a" || len(c.Devices.IDs()) != 2 {
			t.Fatalf("%s chose %+v, %v; want node a with 2 GPUs", name, c, ok)
		}
		if len(ov.Changes()) != 0 {
			t.Fatalf("%s changed the overlay", name)
		}
	}
}

// A policy reused across decisions never hands out devices taken since its last look
// (its fit cache follows node changes), and Undo makes them available again.
func TestPolicyFollowsOverlayChanges(t *testing.T) {
	ov := snap(t, nil, gt.MakeNode("a").GPUs("T4", 2).Obj()).Overlay()
	pol, err := placement.NewPolicy(placement.PolicyBestFit, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := placement.NewSimplePodRequest(gt.Req("nvidia.com/gpu", "1"))
	seen := map[string]bool{}
	mark := ov.Mark()
	for k := 0; k < 2; k++ {
		c, ok := pol.Choose(ov, p, nil)
		if !ok {
			t.Fatalf("decision %d: no node", k)
		}
		id := c.Devices.IDs()[0]
		if seen[id] {
			t.Fatalf("device %s chosen twice", id)
		}
		seen[id] = true
		if err := ov.AssumeAt(cluster.PodRef{Workload: "ns/w", PodSet: "p", Index: k}, c.Node, p.Requests, c.Devices); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := pol.Choose(ov, p, nil); ok {
		t.Fatal("chose a node with no free GPU")
	}
	ov.Undo(mark)
	if _, ok := pol.Choose(ov, p, nil); !ok {
		t.Fatal("after undo the node is free again, but the policy says no")
	}
}
