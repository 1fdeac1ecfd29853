package placement

import (
	"reflect"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

func TestPreemptionSummaryAndRecords(t *testing.T) {
	res := PreemptionResult{
		Preemptor: "ns/big", Outcome: PreemptFound,
		Victims: []Victim{{Workload: "ns/a", Queue: "research", GPUMilli: 8000, LostWork: 2400000}},
		Skipped: []Skipped{{"ns/b", SkipNotNeeded, ""}, {"ns/c", SkipPriority, ""}, {"ns/d", SkipNotNeeded, ""}},
	}
	want := "preempt 1 gang(s) (ns/a: 8000 milli-GPU, 2400000 milli-GPU-s lost) to place ns/big; not chosen: 2 NotNeeded, 1 Priority"
	if got := res.Summary(); got != want {
		t.Errorf("Summary =\n %q\nwant\n %q", got, want)
	}
	recs := res.Records(peNow)
	wantRecs := []PreemptionRecord{{Workload: "ns/a", Queue: "research", At: peNow, GPUMilli: 8000}}
	if !reflect.DeepEqual(recs, wantRecs) {
		t.Errorf("Records = %+v, want %+v", recs, wantRecs)
	}
}

func TestBudgetsOf(t *testing.T) {
	cqs := []api.ClusterQueue{
		{Meta: api.Meta{Name: "research"}, DisruptionBudget: api.DisruptionBudget{MaxGPUs: 16, Window: time.Hour}},
		{Meta: api.Meta{Name: "prod"}},
	}
	got := BudgetsOf(cqs)
	if len(got) != 1 || got["research"].MaxGPUs != 16 {
		t.Fatalf("BudgetsOf = %+v, want only research", got)
	}
}

// Same inputs, same seed: the same victims, notices and placement.
func TestSelectVictimsDeterministic(t *testing.T) {
	snap, running := peFullCluster(t,
		MakeRunning("ns/a").Priority(1).Obj(), MakeRunning("ns/b").Priority(1).Spot().Obj(),
		MakeRunning("ns/c").Priority(1).Spot().Obj(), MakeRunning("ns/d").Priority(1).Obj())
	req := PreemptionRequest{Preemptor: Preemptor{ID: "ns/p", Priority: 5}, Running: running, Now: peNow}
	first, err := SelectVictims(snap.Overlay(), peFirstFit("ns/p", 2, 8), req)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		again, _ := SelectVictims(snap.Overlay(), peFirstFit("ns/p", 2, 8), req)
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("run %d differs:\n%+v\n%+v", i, first, again)
		}
	}
	if first.Outcome != PreemptFound || len(first.Victims) != 2 {
		t.Fatalf("want two spot victims, got %s", first.Summary())
	}
}
