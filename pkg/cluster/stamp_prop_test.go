package cluster_test

import (
	"fmt"
	"slices"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// nodeState renders what a stamp stands for on node i: free resources, free devices and
// the pods bound.
func nodeState(ov *cluster.Overlay, i int) string {
	d := ""
	if ov.Devices(i) != nil {
		d = ov.Devices(i).Free().String()
	}
	pods := slices.Clone(ov.PodsOn(i))
	slices.SortFunc(pods, func(a, b cluster.PodRef) int { return a.Index - b.Index })
	return fmt.Sprintf("%s | %s | %v | %v", ov.Free(i), d, ov.GPUFreeMilli(i), pods)
}

// Property: equal stamps mean equal node states, over overlays of one lineage of
// snapshots (several alive at once, written, undone, committed) and of a second lineage
// built from the same nodes; a commit keeps the stamps of the nodes it copies, so memos
// keyed by stamps stay valid across it.
func TestStampIdentifiesState(t *testing.T) {
	nodes := []cluster.Node{
		gt.MakeNode("whole").GPUs("H100", 4).Obj(),
		gt.MakeNode("mig").GPUs("A100-SXM4-40GB", 2).MIG("all-balanced").Obj(),
		gt.MakeNode("frac").GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.Fractional}).Obj(),
		gt.MakeNode("cpu").Obj(),
	}
	reqs := []resources.Vector{
		gt.Req("cpu", "2", "nvidia.com/gpu", "1"), gt.Req("nvidia.com/gpu", "2"),
		gt.Req("nvidia.com/mig-1g.5gb", "1"), gt.Req("gantry.dev/gpu-milli", "300"), gt.Req("cpu", "8"),
	}
	kept := 0
	rapid.Check(t, func(rt *rapid.T) {
		a, err := cluster.NewSnapshot(nodes, nil)
		if err != nil {
			rt.Fatal(err)
		}
		b, err := cluster.NewSnapshot(nodes, nil)
		if err != nil {
			rt.Fatal(err)
		}
		seen := map[cluster.Stamp]string{}
		check := func(ov *cluster.Overlay, what string) {
			for i := range ov.NumNodes() {
				st, s := ov.Stamp(i), nodeState(ov, i)
				if prev, ok := seen[st]; ok && prev != s {
					rt.Fatalf("%s, node %d: one stamp for two states:\n%s\n%s", what, i, prev, s)
				}
				seen[st] = s
			}
		}
		ovs := []*cluster.Overlay{a.Overlay(), a.Overlay(), b.Overlay()}
		lives := make([][]cluster.PodRef, len(ovs))
		var marks []cluster.Mark
		for step := range rapid.IntRange(1, 40).Draw(rt, "steps") {
			k := rapid.IntRange(0, len(ovs)-1).Draw(rt, "overlay")
			ov := ovs[k]
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0, 1:
				lives[k] = assumeRandom(rt, ov, reqs, step, lives[k])
			case 2:
				lives[k] = forgetRandom(rt, ov, lives[k])
			case 3:
				marks = append(marks[:0], ov.Mark())
				lives[k] = assumeRandom(rt, ov, reqs, 1000+step, lives[k])
				ov.Undo(marks[0])
				lives[k] = slices.DeleteFunc(lives[k], func(p cluster.PodRef) bool { _, ok := ov.Pod(p); return !ok })
			case 4: // commit: the next overlay starts from the snapshot
				before := make([]cluster.Stamp, ov.NumNodes())
				for i := range before {
					before[i] = ov.Stamp(i)
				}
				next := ov.Snapshot().Overlay()
				for i := range before {
					if next.Stamp(i) != before[i] {
						rt.Fatalf("commit changed node %d's stamp", i)
					}
					kept++
				}
				ovs[k] = next
			default:
				ovs = append(ovs, ov.Base().Overlay()) // another overlay of the same snapshot
				lives = append(lives, slices.Clone(lives[k]))
				lives[len(lives)-1] = slices.DeleteFunc(lives[len(lives)-1], func(p cluster.PodRef) bool { _, ok := ov.Base().Pod(p); return !ok })
			}
			for _, o := range ovs {
				check(o, fmt.Sprintf("step %d", step))
			}
		}
	})
	if kept == 0 {
		t.Fatal("no commit was drawn: the property says nothing about commits")
	}
}
