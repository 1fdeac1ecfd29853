package sim

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// A workload the attempt cap (Config.MaxAttempts) leaves out of a cycle is rejected
// "NotTried: ... tried in a later cycle" and is not parked (requeue.go keeps NotTried
// active), so a later cycle must try it even when no event follows. Minimal case:
// MaxAttempts 1, one idle 8-GPU node, quota 8; "big" (16 GPUs, never fits) and "small"
// (1 GPU) arrive at 0. The only cycle tries big; small must still run.
// (Found through TestInvariantsProperty's worlds with maxAttempts > 0, whose
// never-admitted workloads mostly end on NotTried.)
func TestNotTriedWorkloadIsTriedAgain(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("big", 1, 16, 0, time.Hour, 0).Job("small", 1, 1, 0, time.Hour, 0).Obj()
	s, err := New(objs, Options{KeepLog: true, Until: 48 * time.Hour, Policy: engine.Policy{Config: engine.Config{MaxAttempts: 1}, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if _, ok := firstOf(s.Log(), "ns/small", EvFinished); !ok {
		t.Errorf("ns/small (1 GPU, idle 8-GPU node, quota 8) never ran in 48h under MaxAttempts 1: records %v, log:\n%s",
			eventsOf(s.Log(), "ns/small"), encodeLog(t, s.Log()))
	}
}
