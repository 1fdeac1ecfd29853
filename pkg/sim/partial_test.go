package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Kueue's partial-admission sample in the simulator: 20 one-GPU pods with a minimum of
// 9, in a queue of 9 GPUs on 16, run as 9 pods for the job's whole duration, and
// explain says so.
func TestPartialAdmissionRunsAdmittedPods(t *testing.T) {
	objs := MakeWorld().Pool("od", 2, 8, "on-demand").Queue("cq", 9, "od").
		Job("sample", 20, 1, 0, time.Hour, 0).Obj()
	objs.Workloads[0].PodSets[0].MinCount = 9
	s, err := New(objs, Options{KeepLog: true, Policy: engine.Policy{Config: engine.Config{Preemption: true}, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunUntil(30 * time.Minute); err != nil {
		t.Fatal(err)
	}
	e, err := s.Explain("ns/sample")
	if err != nil {
		t.Fatal(err)
	}
	const line = "admitted 9 of 20 pods (partial admission)"
	if e.Phase != plan.Running || len(e.Pods) != 9 || !slices.Contains(e.Details, line) {
		t.Fatalf("explain: phase %s, %d pods, details %q; want Running, 9 pods and %q", e.Phase, len(e.Pods), e.Details, line)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Log() {
		if r.Event == EvPlaced && len(r.Pods) != 9 {
			t.Errorf("placed %d pods, want 9", len(r.Pods))
		}
		if r.Event == EvFinished && r.T != Seconds(time.Hour) {
			t.Errorf("finished at %s, want after its duration of 1h", FormatDuration(r.T))
		}
	}
	if got := eventsOf(s.Log(), "ns/sample"); !slices.Contains(got, EvFinished) {
		t.Errorf("events %v: want it to finish", got)
	}
}
