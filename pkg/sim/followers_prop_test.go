package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// drawQuotaBoundWorld draws a world where quota, not nodes, holds most jobs back: three
// ClusterQueues that never preempt, borrowing in one cohort, on 1-3 nodes of 8 GPUs,
// many jobs of few shapes (1, 2 or 4 GPUs, priority 0-1) submitted in waves. Finishes
// free quota for whole classes of parked jobs, which the scheduler follows one member
// at a time (engine/followers.go).
func drawQuotaBoundWorld(rt *rapid.T) *api.Objects {
	w := MakeWorld().Pool("h", rapid.IntRange(1, 3).Draw(rt, "nodes"), 8, api.CapacityOnDemand)
	for i, cq := range []string{"cq-a", "cq-b", "cq-c"} {
		w.Queue(cq, rapid.Int64Range(1, 8).Draw(rt, "quota"), "h")
		q := &w.o.ClusterQueues[i]
		q.Cohort, q.Preemption = "all", api.Preemption{WithinClusterQueue: api.PreemptNever, ReclaimWithinCohort: api.PreemptNever}
		w.o.LocalQueues[i].Name = "lq-" + cq
	}
	n := rapid.IntRange(4, 30).Draw(rt, "jobs")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("j%02d", i)
		w.Job(name, 1, int64(1)<<rapid.IntRange(0, 2).Draw(rt, "gpusLog2"),
			time.Duration(10*rapid.IntRange(0, 3).Draw(rt, "wave"))*time.Minute,
			time.Duration(rapid.IntRange(5, 60).Draw(rt, "runMin"))*time.Minute, 0).
			Priority(name, int32(rapid.IntRange(0, 1).Draw(rt, "prio")))
		w.o.Workloads[i].Queue = "lq-cq-" + string(rune('a'+rapid.IntRange(0, 2).Draw(rt, "queue")))
	}
	return w.Obj()
}

// Property: in quota-bound worlds, waking one member per class and following the rest
// as the cycle reaches them gives the same decisions as handing every pending workload
// to every cycle (event logs equal once "rejected" records are left out).
func TestFollowingClassesKeepsDecisionsProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		parkingKeepsDecisions(t, rt, drawQuotaBoundWorld(rt))
	})
}
