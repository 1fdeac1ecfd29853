package placement_test

import (
	"fmt"
	"math/rand"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
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
			b := gt.MakeWorkload(fmt.Sprintf("ns/w%d", j)).PodSet("main", count, gt.Req("nvidia.com/gpu", gpus))
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
