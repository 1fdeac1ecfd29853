package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
	"pgregory.net/rapid"
)

// cycleHorizon is far beyond any world of drawPreemptionWorld: at most 14 jobs of at
// most 90 minutes submitted within the first hour finish in under a day even run one
// after another, so a run still busy after two days is preempting in a loop.
const cycleHorizon = 2 * 24 * time.Hour

// drawPreemptionWorld draws the small random world of the parking and preemption property
// tests: two ClusterQueues on 1-3 nodes of 8 GPUs, maybe in one cohort, one maybe
// StrictFIFO, each reclaiming within the cohort never, from lower priorities or always
// (an admission can then turn a parked workload into a reclaiming preemptor within its
// cycle, engine/stirred.go), jobs of 1-8 GPUs with priorities 0-2, a node failure and
// recovery and a quota change. No job checkpoints, so every preemption loses all of the
// victim's work.
func drawPreemptionWorld(rt *rapid.T) *api.Objects {
	w := MakeWorld().Pool("h", rapid.IntRange(1, 3).Draw(rt, "nodes"), 8, api.CapacityOnDemand).
		Queue("cq-a", rapid.Int64Range(4, 16).Draw(rt, "quotaA"), "h")
	w.o.ClusterQueues = append(w.o.ClusterQueues, w.o.ClusterQueues[0])
	w.o.ClusterQueues[1].Name = "cq-b"
	w.o.LocalQueues = append(w.o.LocalQueues, api.LocalQueue{Meta: api.Meta{Name: "lq-b", Namespace: "ns"}, ClusterQueue: "cq-b"})
	if rapid.Bool().Draw(rt, "cohort") {
		w.o.ClusterQueues[0].Cohort, w.o.ClusterQueues[1].Cohort = "all", "all"
	}
	if rapid.Bool().Draw(rt, "strict") {
		w.strict("cq-b")
	}
	reclaim := []api.PreemptionPolicy{api.PreemptNever, api.PreemptLowerPriority, api.PreemptAny}
	for i := range w.o.ClusterQueues {
		w.o.ClusterQueues[i].Preemption.ReclaimWithinCohort = rapid.SampledFrom(reclaim).Draw(rt, "reclaimWithinCohort")
	}
	n := rapid.IntRange(2, 14).Draw(rt, "jobs")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("j%02d", i)
		w.Job(name, 1, int64(rapid.IntRange(1, 8).Draw(rt, "gpus")),
			time.Duration(rapid.IntRange(0, 60).Draw(rt, "submitMin"))*time.Minute,
			time.Duration(rapid.IntRange(5, 90).Draw(rt, "runMin"))*time.Minute, 0).
			Priority(name, int32(rapid.IntRange(0, 2).Draw(rt, "prio")))
		if rapid.Bool().Draw(rt, "inB") {
			w.o.Workloads[i].Queue = "lq-b"
		}
	}
	w.Event(api.ClusterEvent{Meta: api.Meta{Name: "fail"}, Type: api.EventNodeFail, At: 20 * time.Minute, Nodes: []string{"h-0"}}).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "back"}, Type: api.EventNodeRecover, At: 50 * time.Minute, Nodes: []string{"h-0"}}).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "quota"}, Type: api.EventQuotaChange, At: 40 * time.Minute, ClusterQueue: "cq-a",
			ResourceGroups: gpuQuota("h", rapid.Int64Range(2, 16).Draw(rt, "newQuotaA"))})
	return w.Obj()
}

// Property: with preemption on, no reservations and no checkpoints, every small world
// drains (no event is left long before the horizon) and no workload is preempted more
// often than there are workloads (a cycle would preempt the same workloads without end).
func TestPreemptionTerminatesProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		objs := drawPreemptionWorld(rt)
		retryAll := rapid.Bool().Draw(rt, "retryAll")
		cfg := engine.Config{Preemption: true, Grace: time.Minute}
		s, err := New(objs, Options{KeepLog: true, Until: cycleHorizon, Policy: engine.Policy{Config: cfg, Seed: 3, RetryAll: retryAll}})
		if err != nil {
			rt.Fatal(err)
		}
		if err := s.Run(); err != nil {
			rt.Fatal(err)
		}
		preempted := map[string]int{}
		for _, r := range s.Log() {
			if r.Event == EvPreempted {
				preempted[r.Workload]++
			}
		}
		bound := len(objs.Workloads)
		for wl, k := range preempted {
			if k > bound {
				rt.Fatalf("%s preempted %d times, want at most %d (the number of workloads)\n%s", wl, k, bound, preemptionTrail(s.Log(), 40))
			}
		}
		if _, left := s.queue.peek(); left {
			rt.Fatalf("simulation still busy at %s\n%s", cycleHorizon, preemptionTrail(s.Log(), 40))
		}
		// A drained run may still leave workloads that can never start (a quota cut
		// below their size), but none may wait on a preemption that nothing will end.
		last := map[string]EventRecord{}
		for _, r := range s.Log() {
			if r.Workload != "" {
				last[r.Workload] = r
			}
		}
		for wl, r := range last {
			stuck := strings.HasPrefix(r.Reason, string(plan.ReasonWaitingForPreemption)) || strings.HasPrefix(r.Reason, string(plan.ReasonHeldForPreemptor))
			if r.Event != EvFinished && stuck {
				rt.Fatalf("%s ends %s %q: it waits on a preemption that never ends", wl, r.Event, r.Reason)
			}
		}
	})
}

// preemptionTrail is the first n preemption records of a log, one per line, to show a
// cycle in a failure message.
func preemptionTrail(log []EventRecord, n int) string {
	var b strings.Builder
	for _, r := range log {
		if r.Event != EvPreempted || n == 0 {
			continue
		}
		n--
		fmt.Fprintf(&b, "%s %s by %s: %s\n", time.Duration(r.T), r.Workload, r.By, r.Reason)
	}
	return b.String()
}
