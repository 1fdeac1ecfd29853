package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"pgregory.net/rapid"
)

// Property: handing the workloads refused behind reservations apart as slot seekers,
// and visiting only those the GPUs left by the holds could host once the reservation
// slots are taken, changes no decision. The worlds are crowded with gangs of queues
// that do not preempt (the workloads that become slot seekers), a few reservation
// slots and known runtimes (backfill under holds); the event logs with parking and with
// every pending workload in every cycle are byte-identical once "rejected" records are
// left out (a workload left unvisited keeps its last reason).
func TestSlotSeekersKeepDecisionsProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		objs := drawSeekerWorld(rt)
		cfg := engine.Config{Reservations: true, ReservationDepth: rapid.IntRange(1, 3).Draw(rt, "depth"),
			Preemption: rapid.Bool().Draw(rt, "preempt"), Grace: time.Minute}
		parkingKeepsDecisionsUnder(t, rt, objs, cfg)
	})
}

// drawSeekerWorld is 2-5 nodes of 8 GPUs, two ClusterQueues that never preempt (maybe
// in one cohort) and 10-40 jobs of 1, 2, 4 or 8 GPUs or 2-3 pods of 8.
func drawSeekerWorld(rt *rapid.T) *api.Objects {
	nodes := rapid.IntRange(2, 5).Draw(rt, "nodes")
	w := MakeWorld().Pool("h", nodes, 8, api.CapacityOnDemand).
		Queue("cq-a", rapid.Int64Range(8, int64(8*nodes)).Draw(rt, "quotaA"), "h").
		Queue("cq-b", rapid.Int64Range(8, int64(8*nodes)).Draw(rt, "quotaB"), "h")
	w.o.LocalQueues[1].Name = "lq-b"
	cohort := rapid.Bool().Draw(rt, "cohort")
	for i := range w.o.ClusterQueues {
		w.o.ClusterQueues[i].Preemption = api.Preemption{}
		if cohort {
			w.o.ClusterQueues[i].Cohort = "all"
		}
	}
	n := rapid.IntRange(10, 40).Draw(rt, "jobs")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("j%02d", i)
		pods, per := int32(1), int64(1)<<rapid.IntRange(0, 3).Draw(rt, "log2gpus")
		if rapid.IntRange(0, 3).Draw(rt, "gang") == 0 {
			pods, per = int32(rapid.IntRange(2, 3).Draw(rt, "pods")), 8
		}
		w.Job(name, pods, per, time.Duration(rapid.IntRange(0, 90).Draw(rt, "submitMin"))*time.Minute,
			time.Duration(rapid.IntRange(10, 180).Draw(rt, "runMin"))*time.Minute, 0).
			Priority(name, int32(rapid.IntRange(0, 2).Draw(rt, "prio")))
		if rapid.Bool().Draw(rt, "inB") {
			w.o.Workloads[i].Queue = "lq-b"
		}
	}
	return w.Obj()
}
