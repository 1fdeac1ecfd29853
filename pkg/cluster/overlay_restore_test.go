package cluster_test

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A node whose every step is undone reads as the base again, stamp included (so memos
// of it stay valid and a commit shares the base's state), while a node with a step
// left keeps its own; writing a restored node again starts from the base.
func TestUndoRestoresBaseState(t *testing.T) {
	s, err := cluster.NewSnapshot([]cluster.Node{gt.MakeNode("n1").GPUs("H100", 8).Obj(), gt.MakeNode("n2").GPUs("H100", 8).Obj()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := devices.ParseRequest(gt.Req("nvidia.com/gpu", "2"))
	bound := cluster.PodRef{Workload: "ns/bound", PodSet: "main"}
	a, _ := s.Overlay().Devices(0).Fit(r)
	ov := s.Overlay()
	if err := ov.Assume(bound, "n1", gt.Req("cpu", "2", "nvidia.com/gpu", "2"), a); err != nil {
		t.Fatal(err)
	}
	base := ov.Snapshot() // n1 holds a pod of 2 GPUs
	tests := []struct {
		name      string
		steps     func(ov *cluster.Overlay) error
		undoTo    int // steps kept after the undo
		restored  bool
		wantFreeN resources.Amount // n1's free GPUs after the undo
	}{
		{"release undone", func(ov *cluster.Overlay) error { return ov.Forget(bound) }, 0, true, 6},
		{"bind undone", func(ov *cluster.Overlay) error {
			b, _ := ov.Devices(0).Fit(r)
			return ov.Assume(cluster.PodRef{Workload: "ns/new", PodSet: "main"}, "n1", gt.Req("nvidia.com/gpu", "2"), b)
		}, 0, true, 6},
		{"release and bind, one undone", func(ov *cluster.Overlay) error {
			if err := ov.Forget(bound); err != nil {
				return err
			}
			b, _ := ov.Devices(0).Fit(r)
			return ov.Assume(cluster.PodRef{Workload: "ns/new", PodSet: "main"}, "n1", gt.Req("nvidia.com/gpu", "4"), b)
		}, 1, false, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ov := base.Overlay()
			m := ov.Mark()
			if err := tc.steps(ov); err != nil {
				t.Fatal(err)
			}
			ov.Undo(m + cluster.Mark(tc.undoTo))
			if got := ov.Touched(0); got == tc.restored {
				t.Fatalf("Touched = %v after the undo", got)
			}
			if got := ov.Stamp(0) == base.Overlay().Stamp(0); got != tc.restored {
				t.Fatalf("stamp equals the base's: %v", got)
			}
			if got := ov.Devices(0).Free()[resources.NvidiaGPU]; got != tc.wantFreeN {
				t.Fatalf("%d GPUs free after the undo, want %d", got, tc.wantFreeN)
			}
			next := ov.Snapshot()
			if got := next.Overlay().Stamp(0) == base.Overlay().Stamp(0); got != tc.restored {
				t.Fatalf("commit shares the base's state: %v", got)
			}
			// Writing again: a restored node starts from the base's content.
			if err := ov.Forget(bound); (err != nil) != (tc.undoTo == 1) {
				t.Fatalf("release after the undo: %v", err)
			}
			if tc.restored {
				if got := ov.Devices(0).Free()[resources.NvidiaGPU]; got != 8 {
					t.Fatalf("%d GPUs free after releasing the bound pod again, want 8", got)
				}
				if len(ov.PodsOn(0)) != 0 || len(base.PodsOn(0)) != 1 {
					t.Fatalf("pods %v, base %v", ov.PodsOn(0), base.PodsOn(0))
				}
			}
		})
	}
}
