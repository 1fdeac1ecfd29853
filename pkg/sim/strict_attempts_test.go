package sim

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// With an attempt cap, the cycle that tries the workloads left untried must not let a
// StrictFIFO follower past its head, parked since the first cycle: the follower waits
// behind the head whatever the cap (BlockedByHead), as with no cap.
func TestStrictFIFOHeadHoldsUnderAttemptCap(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 16, "h").strict("cq").
		Job("big", 1, 16, 0, time.Hour, 0).Priority("big", 2).
		Job("small", 1, 1, 0, time.Hour, 0).Priority("small", 1).Obj()
	for _, cap := range []int{0, 1} {
		s, err := New(objs, Options{KeepLog: true, Until: 30 * time.Minute, Policy: engine.Policy{Config: engine.Config{MaxAttempts: cap}, Seed: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		for _, r := range s.Log() {
			if r.Event == EvAdmitted {
				t.Errorf("max attempts %d: %s admitted past its StrictFIFO head", cap, r.Workload)
			}
		}
	}
}
