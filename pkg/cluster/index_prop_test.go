package cluster_test

import (
	"fmt"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// indexNodes is a fleet with every kind of GPU node the index files differently: whole
// GPUs (8 and 16, so counts pass the top level), MIG mixed and single, fractional,
// time-sliced with and without renameByDefault, a node mixing models, one with an
// unhealthy GPU, and one without GPUs.
func indexNodes(t *testing.T) []cluster.Node {
	mixed, err := devices.NewNodeDevices([]devices.GPU{
		{Index: 0, Model: "H100", Sharing: devices.Sharing{Mode: devices.Exclusive}, Healthy: true},
		{Index: 1, Model: "A100-SXM4-80GB", Sharing: devices.Sharing{Mode: devices.Exclusive}, Healthy: true},
		{Index: 2, Model: "A100-SXM4-80GB", Sharing: devices.Sharing{Mode: devices.Exclusive}, Healthy: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	sick := gt.MakeNode("sick").GPUs("H100", 4).Obj()
	if err := sick.Devices.SetHealthy(2, false); err != nil {
		t.Fatal(err)
	}
	mixedNode := gt.MakeNode("mixed").Obj()
	mixedNode.Devices = mixed
	held := gt.MakeNode("held").GPUs("H100", 2).Obj()
	if err := held.Devices.Commit(devices.Assignment{Devices: []devices.Device{{GPU: 1, Kind: devices.WholeGPU, Milli: resources.MilliPerGPU}}}); err != nil {
		t.Fatal(err)
	}
	heldMIG := gt.MakeNode("held-mig").GPUs("A100-SXM4-40GB", 2).MIG("all-balanced").Obj()
	r, _ := devices.ParseRequest(gt.Req("nvidia.com/mig-1g.5gb", "1"))
	if a, ref := heldMIG.Devices.Fit(r); ref != nil || heldMIG.Devices.Commit(a) != nil {
		t.Fatalf("holding a MIG instance: %v", ref)
	}
	sickMIG := gt.MakeNode("sick-mig").GPUs("A100-SXM4-40GB", 2).MIG("all-balanced").Obj()
	if err := sickMIG.Devices.SetHealthy(1, false); err != nil {
		t.Fatal(err)
	}
	return []cluster.Node{
		heldMIG, sickMIG,
		gt.MakeNode("h100-8").GPUs("H100", 8).Obj(),
		gt.MakeNode("h100-8b").GPUs("H100", 8).Obj(),
		gt.MakeNode("h100-8c").GPUs("H100", 8).Obj(),
		gt.MakeNode("h100-8-tainted").GPUs("H100", 8).Taint("a", "b", "NoSchedule").Obj(),
		gt.MakeNode("mig-mixed-b").GPUs("A100-SXM4-40GB", 2).MIG("all-balanced").Obj(),
		gt.MakeNode("held-b").GPUs("H100", 2).Obj(),
		held,
		gt.MakeNode("h100-16").GPUs("H100", 16).Obj(),
		gt.MakeNode("a100-4").GPUs("A100-SXM4-80GB", 4).Obj(),
		gt.MakeNode("mig-mixed").GPUs("A100-SXM4-40GB", 2).MIG("all-balanced").Obj(),
		gt.MakeNode("mig-single").GPUs("A100-SXM4-40GB", 2).Sharing(devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle, Layout: "all-1g.5gb"}).Obj(),
		gt.MakeNode("frac").GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.Fractional}).Obj(),
		gt.MakeNode("sliced").GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 3}).Obj(),
		gt.MakeNode("renamed").GPUs("T4", 3).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4, RenameByDefault: true}).Obj(),
		// One GPU of two replicated under its entry's own rename (not renameByDefault).
		gt.MakeNode("renamed-entry").GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Resources: []devices.ReplicatedResource{
			{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 2, Devices: []string{"1"}}}}).Obj(),
		mixedNode, sick,
		gt.MakeNode("cpu").Obj(),
	}
}

// bruteFreeAtLeast is FreeAtLeast by its definition, node by node.
func bruteFreeAtLeast(ov *cluster.Overlay, name resources.Name, n int64, models []devices.ModelID) string {
	out := ""
	for i := 0; i < ov.NumNodes(); i++ {
		ok := n <= 0
		if d := ov.Devices(i); d != nil && !ok {
			var have int64
			if m := ov.GPUMode(i); name == resources.NvidiaGPU && (m == devices.Exclusive || m == devices.Fractional) {
				for _, f := range ov.GPUFreeMilli(i) {
					if f >= resources.MilliPerGPU {
						have++
					}
				}
			} else {
				have = int64(d.Free()[name])
			}
			ok = have >= n && modelMatches(d, models)
		}
		if ok {
			out += ov.Node(i).Name + " "
		}
	}
	return out
}

// modelMatches: any model asked, or the node's one model is asked, or it mixes models.
func modelMatches(d *devices.NodeDevices, models []devices.ModelID) bool {
	if len(models) == 0 {
		return true
	}
	seen := map[devices.ModelID]bool{}
	for _, g := range d.GPUs() {
		m, err := devices.LookupModel(string(g.Model))
		if err != nil {
			return true
		}
		seen[m.ID] = true
	}
	if len(seen) != 1 {
		return true
	}
	for _, m := range models {
		if seen[m] {
			return true
		}
	}
	return false
}

func indexAnswer(ov *cluster.Overlay, name resources.Name, n int64, models []devices.ModelID) string {
	var set cluster.NodeSet
	ov.FreeAtLeast(&set, name, n, models)
	out := ""
	for i := set.Next(0); i >= 0; i = set.Next(i + 1) {
		out += ov.Node(i).Name + " "
	}
	return out
}

// Over random assume/forget/undo sequences, on the overlay and on snapshots made from
// it, the free index answers every query exactly as a scan of the nodes does.
func TestFreeIndexMatchesScan(t *testing.T) {
	base, err := cluster.NewSnapshot(indexNodes(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := []resources.Vector{
		gt.Req("nvidia.com/gpu", "1"), gt.Req("nvidia.com/gpu", "2"), gt.Req("nvidia.com/gpu", "3"),
		gt.Req("nvidia.com/gpu", "8"), gt.Req("nvidia.com/gpu.shared", "2"),
		gt.Req("nvidia.com/mig-1g.5gb", "1"), gt.Req("nvidia.com/mig-3g.20gb", "1"),
		gt.Req("gantry.dev/gpu-milli", "300"), gt.Req("gantry.dev/gpu-milli", "1000"), gt.Req("cpu", "8"),
	}
	names := []resources.Name{resources.NvidiaGPU, resources.NvidiaGPUShared, "nvidia.com/mig-1g.5gb",
		"nvidia.com/mig-2g.10gb", "nvidia.com/mig-3g.20gb", "nvidia.com/mig-7g.40gb"}
	modelSets := [][]devices.ModelID{nil, {"H100-SXM5-80GB"}, {"A100-SXM4-80GB"}, {"T4", "A100-SXM4-40GB"}}
	check := func(rt *rapid.T, ov *cluster.Overlay, what string) {
		checkTwins(rt, ov, what)
		for _, name := range names {
			for _, models := range modelSets {
				for _, n := range []int64{0, 1, 2, 3, 8, 9, 17} {
					if got, want := indexAnswer(ov, name, n, models), bruteFreeAtLeast(ov, name, n, models); got != want {
						rt.Fatalf("%s: %s >= %d of %v: index says [%s], scan says [%s]", what, name, n, models, got, want)
					}
				}
			}
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		ov := base.Overlay()
		var marks []cluster.Mark
		var live []cluster.PodRef
		for step := 0; step < rapid.IntRange(1, 25).Draw(rt, "steps"); step++ {
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0, 1, 2: // assume one pod where the device model says it fits
				live = assumeRandom(rt, ov, reqs, step, live)
			case 3: // forget a live pod
				live = forgetRandom(rt, ov, live)
			case 4:
				marks = append(marks, ov.Mark())
			case 5: // undo to a random mark
				if len(marks) == 0 {
					continue
				}
				k := rapid.IntRange(0, len(marks)-1).Draw(rt, "mark")
				ov.Undo(marks[k])
				marks = marks[:k]
				live = live[:0]
				for _, c := range ov.Changes() {
					if c.Op == cluster.OpBind {
						live = append(live, c.Pod.Ref)
					} else {
						for j, r := range live {
							if r == c.Pod.Ref {
								live = append(live[:j], live[j+1:]...)
								break
							}
						}
					}
				}
			}
			check(rt, ov, fmt.Sprintf("step %d", step))
		}
		// A snapshot made from the overlay, and an overlay over that, answer the same.
		next := ov.Snapshot()
		check(rt, next.Overlay(), "snapshot")
		check(rt, ov, "overlay after snapshot")
		replayed, err := base.Apply(ov.Changes())
		if err != nil {
			rt.Fatalf("replay: %v", err)
		}
		check(rt, replayed.Overlay(), "replayed")
		check(rt, base.Overlay(), "base")
	})
}

// checkTwins: nodes of one twin class are in the same state (resources, devices, taints,
// nothing bound), and a node with pods is nobody's twin.
func checkTwins(rt *rapid.T, ov *cluster.Overlay, what string) {
	state := func(i int) string {
		n := ov.Node(i)
		d := ""
		if ov.Devices(i) != nil {
			d = ov.Devices(i).Free().String() + fmt.Sprint(ov.Devices(i).GPUs())
		}
		return fmt.Sprint(ov.Free(i), n.Allocatable, n.Taints, n.Unschedulable, n.Ready, ov.GPUFreeMilli(i), d)
	}
	classes := map[int32]int{}
	for i := 0; i < ov.NumNodes(); i++ {
		c, ok := ov.TwinClass(i)
		if !ok {
			continue
		}
		if len(ov.PodsOn(i)) > 0 {
			rt.Fatalf("%s: node %s has pods and twin class %d", what, ov.Node(i).Name, c)
		}
		first, seen := classes[c]
		if !seen {
			classes[c] = i
			continue
		}
		if a, b := state(first), state(i); a != b {
			rt.Fatalf("%s: twins %s and %s differ:\n%s\n%s", what, ov.Node(first).Name, ov.Node(i).Name, a, b)
		}
	}
}

// Twins are found where nodes are alike (and only there), and lose their class once
// written.
func TestTwinClasses(t *testing.T) {
	base, err := cluster.NewSnapshot(indexNodes(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ov := base.Overlay()
	class := func(name string) int32 {
		i, _ := ov.NodeIndex(name)
		c, ok := ov.TwinClass(i)
		if !ok {
			return -1
		}
		return c
	}
	if c := class("h100-8"); c < 0 || class("h100-8b") != c || class("h100-8c") != c {
		t.Fatalf("idle H100 nodes: classes %d %d %d, want one class", c, class("h100-8b"), class("h100-8c"))
	}
	if class("mig-mixed") < 0 || class("mig-mixed") != class("mig-mixed-b") {
		t.Fatalf("idle MIG nodes: classes %d %d, want one", class("mig-mixed"), class("mig-mixed-b"))
	}
	for _, name := range []string{"h100-8-tainted", "held", "held-b", "h100-16", "cpu"} {
		if c := class(name); c >= 0 {
			t.Errorf("%s: twin class %d, want none (no twin, or devices held)", name, c)
		}
	}
	i, _ := ov.NodeIndex("h100-8b")
	if err := ov.AssumeAt(cluster.PodRef{Workload: "ns/w", PodSet: "p"}, i, gt.Req("cpu", "1"), devices.Assignment{}); err != nil {
		t.Fatal(err)
	}
	if class("h100-8b") >= 0 {
		t.Fatal("a written node kept its twin class")
	}
	next := ov.Snapshot().Overlay()
	if c, ok := next.TwinClass(i); ok {
		t.Fatalf("the written node has twin class %d in the next snapshot", c)
	}
	if j, _ := next.NodeIndex("h100-8c"); func() bool { c, ok := next.TwinClass(j); return !ok || c != class("h100-8") }() {
		t.Fatal("an untouched node lost its twin class in the next snapshot")
	}
}

// Nodes whose sharing differs only in the one-replica rule or in per-resource replicas
// are not twins: a container's fit differs between them.
func TestTwinsTellSharingSettingsApart(t *testing.T) {
	sliced := devices.Sharing{Mode: devices.TimeSlicing, Replicas: 2}
	strict := sliced
	strict.FailRequestsGreaterThanOne = true
	perGPU := devices.Sharing{Mode: devices.TimeSlicing}
	perGPU.Resources = []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: 2, Devices: []string{"0"}}}
	nodes := []cluster.Node{
		gt.MakeNode("a").GPUs("T4", 2).Sharing(sliced).Obj(),
		gt.MakeNode("b").GPUs("T4", 2).Sharing(sliced).Obj(),
		gt.MakeNode("strict-a").GPUs("T4", 2).Sharing(strict).Obj(),
		gt.MakeNode("strict-b").GPUs("T4", 2).Sharing(strict).Obj(),
		gt.MakeNode("per-gpu").GPUs("T4", 2).Sharing(perGPU).Obj(),
	}
	base, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	ov := base.Overlay()
	class := func(name string) int32 {
		i, _ := ov.NodeIndex(name)
		if c, ok := ov.TwinClass(i); ok {
			return c
		}
		return -1
	}
	if c := class("a"); c < 0 || class("b") != c {
		t.Fatalf("alike sliced nodes: classes %d %d, want one", c, class("b"))
	}
	if c := class("strict-a"); c < 0 || class("strict-b") != c || c == class("a") {
		t.Fatalf("strict nodes: classes %d %d (plain %d), want one class of their own", c, class("strict-b"), class("a"))
	}
	if c := class("per-gpu"); c >= 0 {
		t.Fatalf("per-gpu node: class %d, want none", c)
	}
}
