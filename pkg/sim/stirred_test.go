package sim

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// A preemptor whose quota fit but whose nodes did not is parked. When a cycle admits
// a workload of another queue of its cohort before its turn and so borrows the quota
// the preemptor needs, the preemptor must reclaim it, and the other queue, borrowing
// now, can be reclaimed from: a cycle handed every pending workload does so at once.
// The parked preemptor must do the same in that cycle (engine/stirred.go), not at the
// next event.
//
// Three nodes of 4 GPUs; cq-a (nominal 4) and cq-b (nominal 8, reclaiming from any
// priority) share a cohort. w fills cq-a's quota on node 0; b1 and b2 use 6 of cq-b's
// 8, 3 GPUs on each of the other nodes. All three run at priority 5, so no placement
// preemption is possible for p (cq-b, priority 2, 2 GPUs on one node): its quota fits,
// no node does. At 2m, x (cq-a, priority 6, 1 GPU) is admitted first by borrowing one
// of cq-b's two unused GPUs; p must then reclaim, from w (the lower priority of cq-a's
// two), whose node will hold it.
func TestStirredPreemptorReclaimsInTheSameCycle(t *testing.T) {
	w := MakeWorld().Pool("h", 3, 4, api.CapacityOnDemand).Queue("cq-a", 4, "h").Queue("cq-b", 8, "h").
		Job("w", 1, 4, 0, 10*time.Hour, 0).Priority("w", 5).
		Job("b1", 1, 3, 0, 10*time.Hour, 0).Priority("b1", 5).Job("b2", 1, 3, 0, 10*time.Hour, 0).Priority("b2", 5).
		Job("p", 1, 2, time.Minute, time.Hour, 0).Priority("p", 2).
		Job("x", 1, 1, 2*time.Minute, time.Hour, 0).Priority("x", 6)
	w.o.LocalQueues = w.o.LocalQueues[:1]
	w.inQueue("lq-b", "cq-b", "b1", "b2", "p")
	for _, cq := range []string{"cq-a", "cq-b"} {
		w.withCQ(cq, func(q *api.ClusterQueue) { q.Cohort = "all" })
	}
	w.withCQ("cq-b", func(q *api.ClusterQueue) { q.Preemption.ReclaimWithinCohort = api.PreemptAny })
	cfg := engine.Config{Preemption: true, Grace: time.Minute}
	for _, retryAll := range []bool{false, true} {
		s, _ := simulateWith(t, w.Obj(), cfg, retryAll)
		var admittedX, preemptedW *EventRecord
		for i, r := range s.Log() {
			switch {
			case r.Event == EvAdmitted && r.Workload == "ns/x":
				admittedX = &s.Log()[i]
			case r.Event == EvPreempted && r.Workload == "ns/w" && preemptedW == nil:
				preemptedW = &s.Log()[i]
			}
		}
		if admittedX == nil || preemptedW == nil {
			t.Fatalf("retryAll %v: x admitted %v, w preempted %v; want both", retryAll, admittedX != nil, preemptedW != nil)
		}
		if preemptedW.T != admittedX.T || preemptedW.By != "ns/p" {
			t.Errorf("retryAll %v: w preempted at %v by %s, want at %v (x's admission) by ns/p", retryAll, preemptedW.T, preemptedW.By, admittedX.T)
		}
	}
}
