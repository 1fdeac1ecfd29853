package cluster_test

import (
	"fmt"
	"reflect"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// freeState renders every node's free resources, devices and pods, to compare states.
func freeState(v interface {
	NumNodes() int
	Free(int) resources.Vector
	Devices(int) *devices.NodeDevices
	GPUFreeMilli(int) []resources.MilliGPU
	PodsOn(int) []cluster.PodRef
}) string {
	out := ""
	for i := 0; i < v.NumNodes(); i++ {
		d := ""
		if v.Devices(i) != nil {
			d = v.Devices(i).Free().String()
		}
		out += fmt.Sprintf("%d: %s | %s | %v | %d pods\n", i, v.Free(i), d, v.GPUFreeMilli(i), len(v.PodsOn(i)))
	}
	return out
}

// Random assume/forget/undo sequences: undoing to a mark restores the state at the mark
// exactly, replaying Changes() on the base gives the overlay's snapshot, and the base
// never changes.
func TestOverlayProperties(t *testing.T) {
	nodes := []cluster.Node{
		gt.MakeNode("whole").GPUs("H100", 4).Obj(),
		gt.MakeNode("mig").GPUs("A100-SXM4-40GB", 2).MIG("all-balanced").Obj(),
		gt.MakeNode("frac").GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.Fractional}).Obj(),
		gt.MakeNode("sliced").GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 3}).Obj(),
	}
	base, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	baseState := freeState(base)
	reqs := []resources.Vector{
		gt.Req("cpu", "2", "nvidia.com/gpu", "1"), gt.Req("nvidia.com/gpu", "2"),
		gt.Req("nvidia.com/mig-1g.5gb", "1"), gt.Req("nvidia.com/mig-3g.20gb", "1"),
		gt.Req("gantry.dev/gpu-milli", "300"), gt.Req("cpu", "8"),
	}
	rapid.Check(t, func(rt *rapid.T) {
		ov := base.Overlay()
		var marks []cluster.Mark
		var states []string
		var live []cluster.PodRef
		for step := 0; step < rapid.IntRange(1, 30).Draw(rt, "steps"); step++ {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1: // assume one pod where the device model says it fits
				live = assumeRandom(rt, ov, reqs, step, live)
			case 2: // forget a live pod
				live = forgetRandom(rt, ov, live)
			case 3:
				marks, states = append(marks, ov.Mark()), append(states, freeState(ov))
			}
			checkMirrors(rt, ov)
		}
		all := ov.Changes()
		for _, m := range marks {
			if got, want := ov.ChangesSince(m), all[m:]; !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
				rt.Fatalf("ChangesSince(%d) = %v, want the journal's tail %v", m, got, want)
			}
		}
		replayed, err := base.Apply(all)
		if err != nil {
			rt.Fatalf("replaying changes: %v", err)
		}
		if got, want := freeState(replayed), freeState(ov.Snapshot()); got != want {
			rt.Fatalf("replayed snapshot differs:\n%s\nwant\n%s", got, want)
		}
		// Apply seals its overlay: the snapshot holds the states the overlay wrote, and
		// an overlay on it still copies before writing.
		sealedState := freeState(replayed)
		next := replayed.Overlay()
		assumeRandom(rt, next, reqs, 1000, nil)
		forgetRandom(rt, next, append([]cluster.PodRef(nil), live...))
		if freeState(replayed) != sealedState {
			rt.Fatal("writing an overlay on a sealed snapshot changed the snapshot")
		}
		for k := len(marks) - 1; k >= 0; k-- {
			ov.Undo(marks[k])
			if got := freeState(ov); got != states[k] {
				rt.Fatalf("undo to mark %d:\n%s\nwant\n%s", k, got, states[k])
			}
		}
		ov.Undo(0)
		if got := freeState(ov); got != baseState {
			rt.Fatalf("undo to 0:\n%s\nwant base\n%s", got, baseState)
		}
		if freeState(base) != baseState {
			rt.Fatal("the base snapshot changed")
		}
	})
}

// checkMirrors asserts that the numbers the overlay keeps for the placement hot path agree
// with the maps and the device model they stand for: per-GPU free milli sums to the
// devices' free gpu-milli (replica GPUs count replicas × ⌊1000/replicas⌋), and free cpu,
// memory and pods equal the free vector's; the overlay's free milli-GPU total is the
// sum of every node's, in the overlay and in a snapshot of it.
func checkMirrors(t *rapid.T, ov *cluster.Overlay) {
	var total resources.MilliGPU
	for i := 0; i < ov.NumNodes(); i++ {
		for _, f := range ov.GPUFreeMilli(i) {
			total += f
		}
	}
	if got := ov.FreeGPUMilli(); got != total {
		t.Fatalf("FreeGPUMilli %d, the nodes' free milli-GPU sums to %d", got, total)
	}
	if got, snap := ov.FreeGPUMilli(), ov.Snapshot().FreeGPUMilli(); got != snap {
		t.Fatalf("FreeGPUMilli %d, its snapshot's %d", got, snap)
	}
	for i := 0; i < ov.NumNodes(); i++ {
		free := ov.Free(i)
		cpu, mem := ov.FreeCPUMemory(i)
		pods, limited := ov.FreePods(i)
		_, declared := ov.Node(i).Allocatable[resources.Pods]
		if cpu != free[resources.CPU] || mem != free[resources.Memory] || pods != free[resources.Pods] || limited != declared {
			t.Fatalf("node %d: mirrors cpu=%d mem=%d pods=%d/%v, free %s", i, cpu, mem, pods, limited, free)
		}
		var sum resources.Amount
		for _, f := range ov.GPUFreeMilli(i) {
			sum += resources.Amount(f)
		}
		if d := ov.Devices(i); d != nil && sum != d.Free()[resources.GPUMilli] {
			t.Fatalf("node %d: GPUFreeMilli sums to %d, devices say %d free", i, sum, d.Free()[resources.GPUMilli])
		}
	}
}

// A time-sliced GPU offers replicas × ⌊1000/replicas⌋ in the snapshot's per-GPU view, as
// the device model counts it (3 replicas: 999m, not 1000m), also after a pod lands.
func TestGPUFreeMilliReplicas(t *testing.T) {
	s, err := cluster.NewSnapshot([]cluster.Node{
		gt.MakeNode("sliced").GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 3}).Obj(),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.GPUFreeMilli(0)); got != "[999 999]" {
		t.Fatalf("snapshot view %s, want [999 999]", got)
	}
	ov := s.Overlay()
	r, _ := devices.ParseRequest(gt.Req("nvidia.com/gpu", "1"))
	a, ref := ov.Devices(0).Fit(r)
	if ref != nil {
		t.Fatal(ref)
	}
	if err := ov.AssumeAt(cluster.PodRef{Workload: "ns/w", PodSet: "p"}, 0, gt.Req("nvidia.com/gpu", "1"), a); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ov.GPUFreeMilli(0)); got != "[666 999]" {
		t.Fatalf("overlay view %s, want [666 999]", got)
	}
	if got := fmt.Sprint(s.GPUFreeMilli(0)); got != "[999 999]" {
		t.Fatalf("the snapshot changed under the overlay: %s", got)
	}
}
