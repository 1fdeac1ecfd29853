package placement

import (
	"fmt"
	"math/rand"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

// Property: a diagnosis answered from the memo of earlier cycles is the full scan's.
// A fleet of several node blocks goes through rounds: random gangs are bound and some
// freed, the result committed as the next snapshot, and in a fresh overlay of it (some
// gangs assumed there too, as a cycle does) random shapes are placed with a shared fit
// cache and without one; every placement and diagnosis must match. The memo must have
// reused blocks, and diagnoses must have counted several reasons, or the property says
// nothing.
func TestDiagnosisMemoMatchesFullScan(t *testing.T) {
	reused, diagnosed := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		snap := memoFleet(rt)
		cache := &FitCache{}
		rnd := rand.New(rand.NewSource(rapid.Int64().Draw(rt, "seed")))
		var bound []api.WorkloadID
		for round := range rapid.IntRange(1, 6).Draw(rt, "rounds") {
			ov := snap.Overlay()
			for j := range rapid.IntRange(0, 12).Draw(rt, "binds") {
				w := memoShape(rt, fmt.Sprintf("b%d-%d", round, j))
				if _, d := PlaceWorkload(ov, w, nil, Options{Rand: rnd}); d == nil {
					bound = append(bound, w.ID())
				}
			}
			for _, id := range bound {
				if rapid.IntRange(0, 4).Draw(rt, "free") == 0 {
					for _, bp := range ov.Base().Pods() {
						if bp.Ref.Workload == id {
							_ = ov.Forget(bp.Ref)
						}
					}
				}
			}
			snap = ov.Snapshot()
			plain, cached := snap.Overlay(), snap.Overlay()
			seed := rapid.Int64().Draw(rt, "cycle seed")
			rp, rc := rand.New(rand.NewSource(seed)), rand.New(rand.NewSource(seed))
			for j := range rapid.IntRange(1, 8).Draw(rt, "tries") {
				w := memoShape(rt, fmt.Sprintf("c%d-%d", round, j))
				reused += reusableBlocks(cached, cache)
				p1, d1 := PlaceWorkload(plain, w, nil, Options{Rand: rp})
				p2, d2 := PlaceWorkload(cached, w, nil, Options{Rand: rc, FitCache: cache})
				if got, want := fmt.Sprint(p2, d2), fmt.Sprint(p1, d1); got != want {
					rt.Fatalf("round %d, %s: with the memo\n%s\nfull scan\n%s", round, w.ID(), got, want)
				}
				if d1 != nil && len(d1.Counts) > 1 {
					diagnosed++
				}
			}
		}
	})
	if reused == 0 || diagnosed == 0 {
		t.Fatalf("blocks reused %d, diagnoses with several reasons %d: both must happen", reused, diagnosed)
	}
}

// reusableBlocks counts the blocks of ov whose stamps some memo of c holds.
func reusableBlocks(ov *cluster.Overlay, c *FitCache) int {
	n := 0
	for _, m := range c.diags {
		for b := range min(ov.Blocks(), len(m.stamps)) {
			if s, ok := ov.BlockStamp(b); ok && m.stamps[b] == s {
				n++
			}
		}
	}
	return n
}

// memoFleet is a fleet of 100 to 200 nodes, mostly 8-GPU H100 nodes, some tainted,
// cordoned, small or of another model, so diagnoses have several reasons to count.
func memoFleet(rt *rapid.T) *cluster.Snapshot {
	var nodes []cluster.Node
	for i := range rapid.IntRange(100, 200).Draw(rt, "nodes") {
		n := gt.MakeNode(fmt.Sprintf("n%03d", i)).GPUs("H100", 8)
		switch rapid.IntRange(0, 9).Draw(rt, "kind") {
		case 0:
			n = n.Taint("spot", "true", corev1.TaintEffectNoSchedule)
		case 1:
			n = n.Unschedulable()
		case 2:
			n = n.CPU("8")
		case 3:
			n = gt.MakeNode(fmt.Sprintf("n%03d", i)).GPUs("A100-SXM4-40GB", 4)
		}
		nodes = append(nodes, n.Obj())
	}
	s, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		rt.Fatal(err)
	}
	return s
}

// memoShape is a gang of a random shape, large enough to fail often on a busy fleet.
func memoShape(rt *rapid.T, name string) *api.Workload {
	gpus := rapid.SampledFrom([]string{"1", "4", "8"}).Draw(rt, "gpus")
	cpu := rapid.SampledFrom([]string{"1", "16"}).Draw(rt, "cpu")
	pods := int32(rapid.IntRange(1, 40).Draw(rt, "pods"))
	return gt.MakeWorkload("ns", name).PodSet("main", pods).Requests(gt.Req("nvidia.com/gpu", gpus, "cpu", cpu)).Obj()
}
