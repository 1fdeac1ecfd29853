package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// neverFitWorld: two 8-GPU nodes and ample quota; a 9-GPU pod and a 4 x 8-GPU gang can
// never run there, a 2 x 8-GPU gang can.
func neverFitWorld() *world {
	return MakeWorld().Pool("od", 2, 8, "on-demand").Queue("cq", 100, "od").
		Job("nine", 1, 9, 0, time.Hour, 0).
		Job("gang", 4, 8, 0, time.Hour, 0).
		Job("full", 2, 8, 0, time.Hour, 0)
}

func runNeverFits(t *testing.T, objs *api.Objects, until time.Duration) *Simulator {
	t.Helper()
	s, err := New(objs, Options{KeepLog: true, Until: until, Policy: engine.Policy{Config: engine.Config{Preemption: true, Reservations: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNeverFitsMarked: workloads no placement could ever start are marked NeverFits,
// with why, the closest node and a remedy in explain, one event each and a warning; the
// one that fits runs and is never marked.
func TestNeverFitsMarked(t *testing.T) {
	s := runNeverFits(t, neverFitWorld().Obj(), 0)
	for id, want := range map[api.WorkloadID]string{
		"ns/nine": "no node of the cluster can hold one pod (0 of 2 nodes)",
		"ns/gang": "the gang needs 4 pods at once, the empty cluster holds 2",
	} {
		e, err := s.Explain(id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Phase != plan.Pending || e.Reason != string(plan.ReasonNeverFits) || e.Layer != string(plan.LayerPlacement) ||
			len(e.Details) == 0 || !strings.HasPrefix(e.Details[0], want) || e.Remedy == "" || e.ETA != nil {
			t.Errorf("%s: explained as %+v; want Pending, NeverFits (placement), first detail %q, a remedy, no ETA", id, e, want)
		}
	}
	if e, _ := s.Explain("ns/full"); e.Phase != plan.Finished || e.Reason != "" {
		t.Errorf("ns/full: %s %q; want Finished, no reason", e.Phase, e.Reason)
	}
	marks := map[string]int{}
	for _, r := range s.Log() {
		if r.Event == EvNeverFits {
			marks[r.Workload]++
		}
	}
	if len(marks) != 2 || marks["ns/nine"] != 1 || marks["ns/gang"] != 1 {
		t.Errorf("never-fits events %v; want one each for ns/nine and ns/gang", marks)
	}
	line, ok := NeverFitsWarning(s.NeverFits())
	if want := "warning: 2 workloads can never run on this cluster (NeverFits; gantry explain says why): ns/gang, ns/nine"; !ok || line != want {
		t.Errorf("warning %q (%v), want %q", line, ok, want)
	}
}

// TestNeverFitsClearedWhenNodesAdded: a larger pool arriving later lets the gang run; the
// mark goes with the node set it was made for.
func TestNeverFitsClearedWhenNodesAdded(t *testing.T) {
	extra := api.NodePool{Meta: api.Meta{Name: "more"}, Count: 2, GPUModel: "H100", GPUsPerNode: 8, CPU: 64000,
		Memory: 512 << 30, CapacityType: "on-demand", NodeLabels: map[string]string{"pool": "od"}}
	objs := neverFitWorld().Event(api.ClusterEvent{Meta: api.Meta{Name: "grow"}, Type: api.EventNodeAdd, At: 30 * time.Minute, AddPool: &extra}).Obj()

	before := runNeverFits(t, objs, 20*time.Minute)
	if e, _ := before.Explain("ns/gang"); e.Reason != string(plan.ReasonNeverFits) {
		t.Fatalf("before the pool arrives: %q, want NeverFits", e.Reason)
	}
	after := runNeverFits(t, objs, 0)
	if e, _ := after.Explain("ns/gang"); e.Phase != plan.Finished {
		t.Errorf("gang after the pool arrived: %s %q, want Finished", e.Phase, e.Reason)
	}
	if e, _ := after.Explain("ns/nine"); e.Reason != string(plan.ReasonNeverFits) {
		t.Errorf("9-GPU pod after the pool arrived: %q, still NeverFits (no 9-GPU node came)", e.Reason)
	}
	if got := after.NeverFits(); len(got) != 1 || got[0].Workload != "ns/nine" {
		t.Errorf("NeverFits() = %v, want only ns/nine", got)
	}
}
