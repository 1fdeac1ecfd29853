package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Budget sets ClusterQueue cq's disruption budget.
func (b *world) Budget(cq string, maxGPUs int64, window time.Duration) *world {
	for i := range b.o.ClusterQueues {
		if b.o.ClusterQueues[i].Name == cq {
			b.o.ClusterQueues[i].DisruptionBudget = api.DisruptionBudget{MaxGPUs: maxGPUs, Window: api.Duration(window)}
		}
	}
	return b
}

// TestDisruptionBudgetCapsPreemption: four 8-GPU nodes full of low-priority 8-GPU jobs;
// three high-priority 8-GPU jobs arrive (two at 10m, one at 15m). Quota is ample, so the
// nodes are the problem and placement preempts. A budget of 8 GPUs per hour allows one
// preemption in the first hour (the same-cycle one and the later one are both refused);
// without a budget all three preempt at once.
func TestDisruptionBudgetCapsPreemption(t *testing.T) {
	tests := []struct {
		name   string
		budget int64 // MaxGPUs per hour; 0 = no budget
		// wantEarly is how many preemptions happen before the window ends (70m).
		wantEarly int
	}{
		{name: "no budget", budget: 0, wantEarly: 3},
		{name: "8 GPUs per hour", budget: 8, wantEarly: 1},
		{name: "16 GPUs per hour", budget: 16, wantEarly: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := MakeWorld().Pool("h", 4, 8, api.CapacityOnDemand).Queue("cq", 64, "h").Budget("cq", tc.budget, time.Hour)
			for i := 0; i < 4; i++ {
				w.Job(fmt.Sprintf("low%d", i), 1, 8, 0, 2*time.Hour, 10*time.Minute)
			}
			w.Job("hi0", 1, 8, 10*time.Minute, 30*time.Minute, 0).Job("hi1", 1, 8, 10*time.Minute, 30*time.Minute, 0).
				Job("hi2", 1, 8, 15*time.Minute, 30*time.Minute, 0).
				Priority("hi0", 10).Priority("hi1", 10).Priority("hi2", 10)
			log, _ := runLog(t, w.Obj(), 1)
			early := 0
			for _, r := range log {
				if r.Event == EvPreempted && r.T < Seconds(70*time.Minute) {
					early++
				}
			}
			if early != tc.wantEarly {
				t.Errorf("preemptions before 70m = %d, want %d", early, tc.wantEarly)
			}
			for _, hi := range []string{"ns/hi0", "ns/hi1", "ns/hi2"} {
				if _, ok := firstOf(log, hi, EvFinished); !ok {
					t.Errorf("%s never finished: %v", hi, eventsOf(log, hi))
				}
			}
		})
	}
}

// TestReservationETADoesNotSlip: a 8-GPU gang reserves the node for when the 6-GPU job
// ends (60m); a stream of 1-GPU jobs arrives every 5 minutes. Those that end before the
// ETA backfill on the free GPUs, the others wait: the gang's ETA never moves and it
// starts exactly then.
func TestReservationETADoesNotSlip(t *testing.T) {
	w := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 64, "h").
		Job("running", 1, 6, 0, time.Hour, 0).
		Job("big", 1, 8, 10*time.Minute, 30*time.Minute, 0)
	for i := 0; i < 10; i++ {
		w.Job(fmt.Sprintf("s%02d", i), 1, 1, time.Duration(12+5*i)*time.Minute, 20*time.Minute, 0)
	}
	log, _ := runLog(t, w.Obj(), 1)
	var etas []Seconds
	for _, r := range log {
		if r.Workload == "ns/big" && r.Event == EvReserved && r.ETA != nil {
			etas = append(etas, *r.ETA)
		}
	}
	if len(etas) == 0 {
		t.Fatalf("big never reserved: %v", eventsOf(log, "ns/big"))
	}
	for _, eta := range etas {
		if eta != Seconds(time.Hour) {
			t.Errorf("big's ETAs = %v, want always 3600 s", etas)
			break
		}
	}
	if p, ok := firstOf(log, "ns/big", EvPlaced); !ok || p.T != Seconds(time.Hour) {
		t.Errorf("big placed at %v (found %v), want at its ETA 60m", time.Duration(p.T), ok)
	}
	backfilled := 0
	for i := 0; i < 10; i++ {
		p, ok := firstOf(log, fmt.Sprintf("ns/s%02d", i), EvPlaced)
		if ok && p.T < Seconds(time.Hour) {
			backfilled++
			if end := p.T + Seconds(20*time.Minute); end > Seconds(time.Hour) {
				t.Errorf("s%02d placed at %v ends after the ETA", i, time.Duration(p.T))
			}
		}
	}
	if backfilled == 0 {
		t.Error("no short job backfilled before the ETA")
	}
}
