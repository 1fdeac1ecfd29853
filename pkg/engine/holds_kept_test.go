package engine

import (
	"reflect"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A queue head's hold is computed again only when its cohort tree's admitted workloads
// (or the head, or the quota) change: an admission elsewhere keeps it, a release in its
// tree moves it, and what the scheduler hands the cycle is always what holdsOf gives.
//
// a and b (nominal 4 each, a never reclaims) share cohort c, z stands alone. b runs six
// GPUs, borrowing two of a's; a's head asks for four: it needs a reclaim it may not
// make, so a holds its unused nominal quota. Once two of b's leave, the head fits: no
// hold.
func TestKeptHoldsFollowTheirTree(t *testing.T) {
	four := gt.MakeFlavorQuotas("f").Resource(resources.NvidiaGPU, "4").Obj()
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("f").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("c").Preemption(api.PreemptNever, api.PreemptNever).ResourceGroup(four).Obj(),
		gt.MakeClusterQueue("b").Cohort("c").ResourceGroup(four).Obj(),
		gt.MakeClusterQueue("z").ResourceGroup(four).Obj()).Obj()
	s, q := buildWithQuota(t, objs)
	admit := func(cq string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			w := gt.MakeWorkload("ns", cq+"-run"+string(rune('a'+len(q.AdmittedWorkloads())))).Request(resources.NvidiaGPU, "1").Obj()
			if err := q.Admit(w, q.Assign(w, cq)); err != nil {
				t.Fatalf("admit in %s: %v", cq, err)
			}
		}
	}
	admit("b", 6)
	heads := []Pending{{Workload: gt.MakeWorkload("ns", "head").Request(resources.NvidiaGPU, "4").Obj(), ClusterQueue: "a"}}
	check := func(step string, holds int) {
		t.Helper()
		got := s.keptHolds(q, heads, nil)
		want := holdsOf(NewAdmissionQuota(q, nil), heads, s.eng.cfg.Preemption, nil)
		if len(want) != holds || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: kept holds %v, holdsOf %v (want the same, %d of them)", step, got, want, holds)
		}
	}
	check("first", 1)
	kept := s.holdMemo["a"].hold
	admit("z", 1)
	check("after an admission in another tree", 1)
	if s.holdMemo["a"].hold != kept {
		t.Error("an admission in another tree computed a's hold again")
	}
	for _, w := range q.AdmittedWorkloads()[:2] { // two of b's
		if err := q.Release(w.ID); err != nil {
			t.Fatal(err)
		}
	}
	check("after two of b's left", 0)
}
