package admission

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
)

// When two flavors both need preemption, the choice between them simulates the
// preemption for the workload itself (Kueue's oracle), so its priority decides and the
// answer is marked Own: a caller must not hand it to another workload of the same
// shape (engine/equivalence.go). A choice that simulates nothing is not marked.
func TestAssignOwnWhenPreemptionChoosesTheFlavor(t *testing.T) {
	objs := gt.MakeObjects().Flavors(kueueScheduleFlavors()...).
		ClusterQueues(append(kueueScheduleCQs(), otherAlphaBeta()...)...).Obj()
	q, err := NewQuota(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// other-alpha (10 + 10 nominal) uses 5 on-demand at priority 200 and 5 spot at 50;
	// other-beta borrows 5 spot at 50. Only spot has victims for priority 100, neither
	// flavor has any for priority 0.
	admitAll(t, q, []kueueAdmitted{adm("a1", "other-alpha", 200, use("on-demand", gpuR, "5")),
		adm("a2", "other-alpha", 50, use("spot", gpuR, "5")), adm("b1", "other-beta", 50, use("spot", gpuR, "5"))})

	high := q.Assign(gt.MakeWorkload("eng-alpha", "high").Priority(100).Request(gpuR, "6").Obj(), "other-alpha")
	low := q.Assign(gt.MakeWorkload("eng-alpha", "low").Priority(0).Request(gpuR, "6").Obj(), "other-alpha")
	for name, a := range map[string]Assignment{"high": high, "low": low} {
		if a.Mode != Preempt || !a.Own {
			t.Errorf("%s: mode %v own %v, want Preempt and own (both flavors need preemption)", name, a.Mode, a.Own)
		}
	}
	if high.FlavorNames()[0] == low.FlavorNames()[0] {
		t.Errorf("priorities 100 and 0 got the same flavor %v: the simulation should tell them apart", high.FlavorNames())
	}

	fits := q.Assign(gt.MakeWorkload("eng-alpha", "small").Priority(0).Request(gpuR, "4").Obj(), "other-alpha")
	if fits.Mode < Borrow || fits.Own {
		t.Errorf("small: mode %v own %v, want a fit chosen without simulating preemption", fits.Mode, fits.Own)
	}
}
