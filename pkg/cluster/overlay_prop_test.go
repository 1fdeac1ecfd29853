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
				i := rapid.IntRange(0, ov.NumNodes()-1).Draw(rt, "node")
				req := rapid.SampledFrom(reqs).Draw(rt, "req")
				var a devices.Assignment
				if r, _ := devices.ParseRequest(req); !r.IsZero() {
					if ov.Devices(i) == nil {
						continue
					}
					var ref *devices.Refusal
					if a, ref = ov.Devices(i).Fit(r); ref != nil {
						continue
					}
				}
				pod := cluster.PodRef{Workload: "ns/w", PodSet: "p", Index: step}
				if err := ov.AssumeAt(pod, i, req, a); err == nil {
					live = append(live, pod)
				}
			case 2: // forget a live pod
				if len(live) == 0 {
					continue
				}
				k := rapid.IntRange(0, len(live)-1).Draw(rt, "victim")
				if err := ov.Forget(live[k]); err != nil {
					rt.Fatalf("forget %s: %v", live[k], err)
				}
				live = append(live[:k], live[k+1:]...)
			case 3:
				marks, states = append(marks, ov.Mark()), append(states, freeState(ov))
			}
		}
		replayed, err := base.Apply(ov.Changes())
		if err != nil {
			rt.Fatalf("replaying changes: %v", err)
		}
		if got, want := freeState(replayed), freeState(ov.Snapshot()); got != want {
			rt.Fatalf("replayed snapshot differs:\n%s\nwant\n%s", got, want)
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
