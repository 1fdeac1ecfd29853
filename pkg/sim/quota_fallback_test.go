package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// gpuQuota is one resource group covering nvidia.com/gpu with n GPUs in flavor f.
func gpuQuota(f string, n int64) []api.ResourceGroup {
	return []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
		Flavors: []api.FlavorQuotas{{Name: f, Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: resources.Amount(n)}}}}}}
}

// newTestSim builds a simulator with the scenario tests' engine policy.
func newTestSim(t *testing.T, objs *api.Objects) *Simulator {
	t.Helper()
	cfg := engine.Config{Preemption: true, Reservations: true, Grace: 2 * time.Minute}
	s, err := New(objs, Options{KeepLog: true, Policy: engine.Policy{Config: cfg, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A quota lowered below current usage keeps the running workloads counted (nothing is
// evicted, nothing is forgotten), so a new workload waits until usage drains below the
// new quota: not when the first of two running workloads ends (8 used of 8), only when
// the second does.
func TestQuotaLoweredBelowUsageKeepsRunningWorkloadsCounted(t *testing.T) {
	objs := MakeWorld().Pool("h", 2, 8, api.CapacityOnDemand).Queue("cq", 16, "h").
		Job("a", 1, 8, 0, time.Hour, 0).
		Job("b", 1, 8, 0, 2*time.Hour, 0).
		Job("c", 1, 8, 15*time.Minute, time.Hour, 0).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "lower"}, Type: api.EventQuotaChange, At: 10 * time.Minute, ClusterQueue: "cq", ResourceGroups: gpuQuota("h", 8)}).
		Obj()
	s := newTestSim(t, objs)
	if err := s.RunUntil(20 * time.Minute); err != nil {
		t.Fatal(err)
	}
	// want: both running workloads still counted after the change (16 of the new 8).
	if got := s.quota.Usage("cq", "h", resources.NvidiaGPU); got != 16 {
		t.Errorf("usage after lowering the quota = %d GPUs, want 16 (a and b still counted)", got)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	placed, ok := firstOf(s.Log(), "ns/c", EvPlaced)
	// want: c starts at 2h, when b ends; at 1h (a ends) usage is 8 = the new quota.
	if !ok || placed.T != Seconds(2*time.Hour) {
		t.Errorf("c placed at %v (found %v), want at 2h when usage drops below the new quota", time.Duration(placed.T), ok)
	}
	if rej, ok := firstOf(s.Log(), "ns/c", EvRejected); !ok || rej.Layer != "admission" {
		t.Errorf("c's first rejection = %+v (found %v), want an admission (quota) rejection", rej, ok)
	}
}

// Flavor fallback rules out exactly the flavor placement could not use. Here spot and
// on-demand share the label tier=gpu; excluding spot by its labels (the old NotIn trick)
// would also have ruled out on-demand and left b waiting.
func TestFallbackWithFlavorsSharingALabel(t *testing.T) {
	w := MakeWorld().Pool("spot", 1, 8, api.CapacitySpot).Pool("od", 1, 8, api.CapacityOnDemand).
		Queue("cq", 16, "spot", "od").
		Job("a", 1, 8, 0, time.Hour, 0).
		Job("b", 1, 8, 0, time.Hour, 0)
	for i := range w.o.Flavors {
		w.o.Flavors[i].NodeLabels["tier"] = "gpu"
	}
	for i := range w.o.NodePools {
		w.o.NodePools[i].NodeLabels["tier"] = "gpu"
	}
	log, _ := runLog(t, w.Obj(), 1)
	var flavors []string
	for _, wl := range []string{"ns/a", "ns/b"} {
		p, ok := firstOf(log, wl, EvPlaced)
		if !ok || p.T != 0 {
			t.Fatalf("%s placed = %+v (found %v), want placed at 0", wl, p, ok)
		}
		flavors = append(flavors, p.Flavor)
	}
	// want: a takes the spot node (quota 16 allows b there too, the node does not), b
	// falls back to on-demand in the same cycle.
	if want := "[spot od]"; fmt.Sprint(flavors) != want {
		t.Errorf("flavors = %v, want %s", flavors, want)
	}
}
