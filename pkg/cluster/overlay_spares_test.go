package cluster_test

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// Overlays made one after another on one Spares, each recycled when done, behave as
// fresh overlays: every round's snapshot equals its changes replayed on the round's
// base, and the snapshots of earlier rounds are not changed by the reuse of the
// overlays' memory.
func TestOverlaySparesReuse(t *testing.T) {
	nodes := []cluster.Node{
		gt.MakeNode("whole").GPUs("H100", 4).Obj(),
		gt.MakeNode("whole-2").GPUs("H100", 8).Obj(),
		gt.MakeNode("mig").GPUs("A100-SXM4-40GB", 2).MIG("all-balanced").Obj(),
		gt.MakeNode("frac").GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.Fractional}).Obj(),
		gt.MakeNode("cpu-only").Obj(),
	}
	first, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := []resources.Vector{
		gt.Req("cpu", "2", "nvidia.com/gpu", "1"), gt.Req("nvidia.com/gpu", "2"),
		gt.Req("nvidia.com/mig-1g.5gb", "1"), gt.Req("gantry.dev/gpu-milli", "300"), gt.Req("cpu", "8"),
	}
	rapid.Check(t, func(rt *rapid.T) {
		var sp cluster.Spares
		base := first
		var snaps []*cluster.Snapshot
		var states []string
		var live []cluster.PodRef
		step := 0
		for round := 0; round < rapid.IntRange(1, 6).Draw(rt, "rounds"); round++ {
			ov := base.OverlayWith(&sp)
			mark := ov.Mark()
			for k := 0; k < rapid.IntRange(0, 12).Draw(rt, "steps"); k++ {
				step++
				if rapid.Bool().Draw(rt, "assume") {
					live = assumeRandom(rt, ov, reqs, step, live)
				} else {
					live = forgetRandom(rt, ov, live)
				}
				checkMirrors(rt, ov)
			}
			if rapid.Bool().Draw(rt, "walk") { // a reservation walk: release and undo
				m := ov.Mark()
				for _, ref := range live {
					if err := ov.Forget(ref); err != nil {
						rt.Fatalf("forget %s: %v", ref, err)
					}
				}
				ov.Undo(m)
			}
			replayed, err := base.Apply(ov.ChangesSince(mark))
			if err != nil {
				rt.Fatalf("round %d: replaying changes: %v", round, err)
			}
			next := ov.Snapshot()
			if got, want := freeState(next), freeState(replayed); got != want {
				rt.Fatalf("round %d: snapshot of a reused overlay:\n%s\nwant\n%s", round, got, want)
			}
			ov.Recycle()
			snaps, states = append(snaps, next), append(states, freeState(next))
			base = next
		}
		for k, s := range snaps {
			if got := freeState(s); got != states[k] {
				rt.Fatalf("snapshot of round %d changed after its overlay was recycled:\n%s\nwant\n%s", k, got, states[k])
			}
		}
	})
}
