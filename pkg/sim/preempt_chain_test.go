package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// chainWorld is the world TestPreemptionTerminatesProperty found before the fix: one
// node of 8 GPUs, cq-a (quota 6, then 10 from 40m) and cq-b (StrictFIFO), no cohort,
// no checkpoints. From 2h01m, j01 (8 GPUs, priority 1) needs both j13 (6 GPUs) out of
// cq-a's quota and j06 (1 GPU) off the node. It preempted one, the other came back in
// the same cycle, and so on every minute: a livelock of 4,000+ preemptions.
func chainWorld() *api.Objects {
	type job struct {
		gpus        int64
		submit, run int // minutes
		prio        int32
		inB         bool
	}
	jobs := []job{{1, 4, 26, 1, true}, {8, 6, 6, 1, false}, {4, 1, 43, 1, true}, {2, 32, 5, 2, false},
		{3, 0, 7, 1, false}, {6, 2, 6, 2, true}, {1, 17, 90, 0, false}, {4, 6, 5, 1, true},
		{4, 13, 40, 2, true}, {1, 48, 13, 1, false}, {2, 48, 7, 0, true}, {3, 54, 65, 2, false},
		{7, 1, 44, 1, true}, {6, 1, 44, 0, false}}
	w := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq-a", 6, "h")
	w.o.ClusterQueues = append(w.o.ClusterQueues, w.o.ClusterQueues[0])
	w.o.ClusterQueues[1].Name = "cq-b"
	w.o.LocalQueues = append(w.o.LocalQueues, api.LocalQueue{Meta: api.Meta{Name: "lq-b", Namespace: "ns"}, ClusterQueue: "cq-b"})
	w.strict("cq-b")
	for i, j := range jobs {
		name := fmt.Sprintf("j%02d", i)
		w.Job(name, 1, j.gpus, time.Duration(j.submit)*time.Minute, time.Duration(j.run)*time.Minute, 0).Priority(name, j.prio)
		if j.inB {
			w.o.Workloads[i].Queue = "lq-b"
		}
	}
	return w.Event(api.ClusterEvent{Meta: api.Meta{Name: "fail"}, Type: api.EventNodeFail, At: 20 * time.Minute, Nodes: []string{"h-0"}}).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "back"}, Type: api.EventNodeRecover, At: 50 * time.Minute, Nodes: []string{"h-0"}}).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "quota"}, Type: api.EventQuotaChange, At: 40 * time.Minute, ClusterQueue: "cq-a",
			ResourceGroups: gpuQuota("h", 10)}).Obj()
}

// A preemptor that needs one victim out of its quota and another off its nodes gets
// both: a victim it preempted is held while it waits for the other, and it never
// preempts the same workload twice before it starts.
func TestPreemptionChainTerminates(t *testing.T) {
	for _, retryAll := range []bool{false, true} {
		t.Run(fmt.Sprintf("retryAll=%v", retryAll), func(t *testing.T) {
			cfg := engine.Config{Preemption: true, Grace: time.Minute}
			objs := chainWorld()
			s, err := New(objs, Options{KeepLog: true, Policy: engine.Policy{Config: cfg, Seed: 3, RetryAll: retryAll}})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
			byJ01 := map[string]int{}
			for _, r := range s.Log() {
				if r.Event == EvPreempted && r.By == "ns/j01" {
					byJ01[r.Workload]++
				}
			}
			// want: j01 preempts j06 (nodes, 2h01m) and j13 (quota, 2h02m) once each
			// (before the fix: thousands of times) and starts when j13 leaves, 2h03m.
			if byJ01["ns/j06"] != 1 || byJ01["ns/j13"] != 1 || len(byJ01) != 2 {
				t.Errorf("j01 preempted %v, want j06 and j13 once each", byJ01)
			}
			if p, ok := firstOf(s.Log(), "ns/j01", EvPlaced); !ok || p.T != Seconds(123*time.Minute) {
				t.Errorf("j01 placed at %v (found %v), want 2h03m", time.Duration(p.T), ok)
			}
			// want: every cq-a job finishes. cq-b's StrictFIFO head j12 (7 GPUs) never
			// fits cq-b's quota of 6, so cq-b stays blocked: not a preemption matter.
			for i := range objs.Workloads {
				w := &objs.Workloads[i]
				if _, ok := firstOf(s.Log(), string(w.ID()), EvFinished); !ok && w.Queue == "lq" {
					t.Errorf("%s never finished; its events: %v", w.ID(), eventsOf(s.Log(), string(w.ID())))
				}
			}
		})
	}
}
