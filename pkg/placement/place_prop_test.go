package placement_test

import (
	"fmt"
	"math/rand"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"pgregory.net/rapid"
)

// Properties over random clusters and gangs: a gang is placed completely or not at all
// (a failure leaves the overlay unchanged), no device is handed out twice, and a required
// rack topology always holds.
func TestGangProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nRacks := rapid.IntRange(1, 3).Draw(rt, "racks")
		var nodes []cluster.Node
		for r := 0; r < nRacks; r++ {
			for k := 0; k < rapid.IntRange(1, 3).Draw(rt, "nodes"); k++ {
				nodes = append(nodes, gt.MakeNode(fmt.Sprintf("r%d-n%d", r, k)).GPUs("H100", 8).Label(rack, fmt.Sprintf("r%d", r)).Obj())
			}
		}
		s, err := cluster.NewSnapshot(nodes, rackTopo)
		if err != nil {
			rt.Fatal(err)
		}
		ov := s.Overlay()
		rnd := rand.New(rand.NewSource(rapid.Int64().Draw(rt, "seed")))
		used := map[string]bool{}
		for j := 0; j < rapid.IntRange(1, 6).Draw(rt, "workloads"); j++ {
			count := int32(rapid.IntRange(1, 6).Draw(rt, "pods"))
			gpus := rapid.SampledFrom([]string{"1", "2", "4", "8"}).Draw(rt, "gpus")
			b := gt.MakeWorkload("ns", fmt.Sprintf("w%d", j)).PodSet("main", count).Requests(gt.Req("nvidia.com/gpu", gpus))
			required := rapid.Bool().Draw(rt, "required")
			if required {
				b = b.RequiredTopology(rack)
			}
			before := len(ov.Changes())
			pl, d := placement.PlaceWorkload(ov, b.Obj(), nil, placement.Options{Rand: rnd})
			if d != nil {
				if len(ov.Changes()) != before {
					rt.Fatalf("failed gang left changes: %d -> %d", before, len(ov.Changes()))
				}
				continue
			}
			if len(pl.Pods) != int(count) {
				rt.Fatalf("placed %d of %d pods", len(pl.Pods), count)
			}
			racksUsed := map[string]bool{}
			for _, p := range pl.Pods {
				for _, id := range p.Devices.IDs() {
					key := p.Node + "/" + id
					if used[key] {
						rt.Fatalf("device %s handed out twice", key)
					}
					used[key] = true
				}
				i, _ := ov.NodeIndex(p.Node)
				racksUsed[ov.Node(i).Labels[rack]] = true
			}
			if required && len(racksUsed) != 1 {
				rt.Fatalf("required rack topology broken: racks %v", racksUsed)
			}
		}
	})
}

// Property: a FitCache shared across placements changes no decision. Random workloads of
// every GPU kind are placed in turn on two overlays of one mixed cluster (whole, MIG,
// time-sliced and fractional nodes), one with a cache shared by all placements and one
// without, with equal seeds; every placement and diagnosis must match.
func TestFitCacheChangesNoDecision(t *testing.T) {
	nodes := []cluster.Node{
		gt.MakeNode("whole").GPUs("H100", 8).Obj(),
		gt.MakeNode("mig").GPUs("A100-SXM4-40GB", 4).MIG("all-balanced").Obj(),
		gt.MakeNode("sliced").GPUs("T4", 4).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}).Obj(),
		gt.MakeNode("frac").GPUs("V100", 4).Sharing(devices.Sharing{Mode: devices.Fractional}).Obj(),
		gt.MakeNode("frac2").GPUs("V100", 2).Sharing(devices.Sharing{Mode: devices.Fractional}).Obj(),
	}
	s, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	shapes := [][]string{
		{"nvidia.com/gpu", "1"}, {"nvidia.com/gpu", "2"}, {"nvidia.com/mig-1g.5gb", "1"},
		{"nvidia.com/mig-3g.20gb", "1"}, {"gantry.dev/gpu-milli", "300"}, {"gantry.dev/gpu-milli", "700"},
	}
	placedKinds := map[string]bool{} // shapes placed at least once, so the check is not vacuous
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Int64().Draw(rt, "seed")
		plain, cached := s.Overlay(), s.Overlay()
		rndPlain, rndCached := rand.New(rand.NewSource(seed)), rand.New(rand.NewSource(seed))
		cache := &placement.FitCache{}
		for j := range rapid.IntRange(1, 12).Draw(rt, "workloads") {
			shape := rapid.SampledFrom(shapes).Draw(rt, "shape")
			count := int32(rapid.IntRange(1, 3).Draw(rt, "pods"))
			w := gt.MakeWorkload("ns", fmt.Sprintf("w%d", j)).PodSet("main", count).Requests(gt.Req(shape[0], shape[1])).Obj()
			p1, d1 := placement.PlaceWorkload(plain, w, nil, placement.Options{Rand: rndPlain})
			p2, d2 := placement.PlaceWorkload(cached, w, nil, placement.Options{Rand: rndCached, FitCache: cache})
			if got, want := fmt.Sprint(p2, d2), fmt.Sprint(p1, d1); got != want {
				rt.Fatalf("workload %d (%v x%d): with cache %s, without %s", j, shape, count, got, want)
			}
			if d1 == nil {
				placedKinds[shape[0]] = true
			}
		}
	})
	if len(placedKinds) < 4 {
		t.Fatalf("only %v were ever placed", placedKinds)
	}
}
