package cluster_test

import (
	"fmt"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// dynamicMIG is the sharing of a GPU whose MIG layout is chosen at allocation time.
var dynamicMIG = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}

// On a GPU whose MIG layout is chosen at allocation time, carving an instance or taking
// the GPU whole changes how many instances of every profile could still be carved (the
// nvidia.com/mig-<profile> counts), so the free index must recount such a node on every
// assume, forget and undo: it answers as a scan of the nodes does after each step.
func TestFreeIndexOnDynamicMIG(t *testing.T) {
	nodes := []cluster.Node{
		gt.MakeNode("dyn").GPUs("A100-SXM4-40GB", 1).Sharing(dynamicMIG).Obj(),
		gt.MakeNode("dyn-2").GPUs("A100-SXM4-40GB", 2).Sharing(dynamicMIG).Obj(),
		gt.MakeNode("fixed").GPUs("A100-SXM4-40GB", 1).MIG(devices.LayoutBalanced).Obj(),
	}
	base, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := []resources.Name{resources.NvidiaGPU, "nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb",
		"nvidia.com/mig-3g.20gb", "nvidia.com/mig-4g.20gb", "nvidia.com/mig-7g.40gb"}
	check := func(ov *cluster.Overlay, what string) {
		t.Helper()
		for _, name := range names {
			for n := int64(1); n <= 8; n++ {
				if got, want := indexAnswer(ov, name, n, nil), bruteFreeAtLeast(ov, name, n, nil); got != want {
					t.Errorf("%s: %s >= %d: index says [%s], scan says [%s]", what, name, n, got, want)
				}
			}
		}
	}
	ov := base.Overlay()
	assume := func(pod int, node string, ids ...string) {
		t.Helper()
		i, _ := ov.NodeIndex(node)
		a, err := devices.AssignmentFromIDs(ov.Devices(i), ids)
		if err != nil {
			t.Fatal(err)
		}
		if err := ov.Assume(cluster.PodRef{Workload: "w", Index: pod}, node, nil, a); err != nil {
			t.Fatalf("%s on %s: %v", ids, node, err)
		}
		check(ov, fmt.Sprintf("after pod %d takes %v", pod, ids))
	}
	check(ov, "fresh")
	mark := ov.Mark()
	assume(1, "dyn", "GPU-0/mig-3g.20gb@4")
	assume(2, "dyn", "GPU-0/mig-2g.10gb@0")
	assume(3, "dyn-2", "GPU-1")
	assume(4, "dyn-2", "GPU-0/mig-1g.5gb@6")
	// The carving survives into a snapshot and replays.
	check(ov.Snapshot().Overlay(), "snapshot")
	if err := ov.Forget(cluster.PodRef{Workload: "w", Index: 1}); err != nil {
		t.Fatal(err)
	}
	check(ov, "after releasing the 3g.20gb")
	ov.Undo(mark)
	check(ov, "undone")
	if i, _ := ov.NodeIndex("dyn"); ov.Devices(i).Free()["nvidia.com/mig-3g.20gb"] != 2 {
		t.Errorf("undone: %v free, want two 3g.20gb carvable again", ov.Devices(i).Free())
	}
}

// A node of dynamic GPUs reads as Exclusive and is filed under nvidia.com/gpu by the
// GPUs whose free share is whole, so a whole-GPU DRA claim finds it; a GPU with an
// instance carved on it is no longer whole.
func TestDynamicNodeFoundByWholeGPUClaims(t *testing.T) {
	base, err := cluster.NewSnapshot([]cluster.Node{gt.MakeNode("dyn").GPUs("A100-SXM4-40GB", 2).Sharing(dynamicMIG).Obj()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ov := base.Overlay()
	if m := ov.GPUMode(0); m != devices.Exclusive {
		t.Errorf("GPU mode %s, want %s", m, devices.Exclusive)
	}
	if got := indexAnswer(ov, resources.NvidiaGPU, 2, []devices.ModelID{"A100-SXM4-40GB"}); got != "dyn " {
		t.Errorf("two whole GPUs free: index says [%s], want [dyn ]", got)
	}
	a, err := devices.AssignmentFromIDs(ov.Devices(0), []string{"GPU-1/mig-1g.5gb@6"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ov.Assume(cluster.PodRef{Workload: "w"}, "dyn", nil, a); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int64]string{1: "dyn ", 2: ""} {
		if got := indexAnswer(ov, resources.NvidiaGPU, n, nil); got != want {
			t.Errorf("%d whole GPUs free after carving on GPU 1: index says [%s], want [%s]", n, got, want)
		}
	}
}
