package admission

import (
	"slices"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// holdQuota is a cohort of two ClusterQueues on one flavor: a (nominal 4, reclaim as
// given, borrowing limit as given) and b (nominal 4), with usage admitted as asked.
func holdQuota(t *testing.T, reclaim api.PreemptionPolicy, borrowLimit string, useA, useB int) *Quota {
	t.Helper()
	fa := gt.MakeFlavorQuotas("f").Resource(gpu, "4")
	if borrowLimit != "" {
		fa.Borrow(borrowLimit)
	}
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("f").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("c").Preemption(api.PreemptNever, reclaim).ResourceGroup(fa.Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "4").Obj()).Obj()).Obj()
	q, err := NewQuota(objs, Options{})
	if err != nil {
		t.Fatalf("NewQuota: %v", err)
	}
	for i := 0; i < useA; i++ {
		admitOne(t, q, "a", i)
	}
	for i := 0; i < useB; i++ {
		admitOne(t, q, "b", i)
	}
	return q
}

// admitOne admits a one-GPU workload in cq, named after cq and i.
func admitOne(t *testing.T, q *Quota, cq string, i int) {
	t.Helper()
	w := gt.MakeWorkload("ns", cq+string(rune('0'+i))).Request(gpu, "1").Obj()
	if err := q.Admit(w, q.Assign(w, cq)); err != nil {
		t.Fatalf("admit %s: %v", w.ID(), err)
	}
}

func usageOf(cq string, n int64) Assignment {
	return Assignment{ClusterQueue: cq, Usage: []FlavorAmount{{FlavorResource: FlavorResource{Flavor: "f", Resource: gpu}, Amount: resources.Amount(n)}}}
}

// FitsAfter counts held usage and removes gone workloads for its answer only.
func TestFitsAfter(t *testing.T) {
	q := holdQuota(t, api.PreemptNever, "", 3, 3) // 6 of 8 used
	before := slices.Clone(q.usage)
	three := usageOf("b", 3)
	cases := []struct {
		name string
		held []Assignment
		gone []api.WorkloadID
		want bool
	}{
		{"as it stands", nil, nil, false},
		{"one of a gone", nil, []api.WorkloadID{"ns/a0"}, true},
		{"one gone, one held back", []Assignment{usageOf("a", 1)}, []api.WorkloadID{"ns/a0"}, false},
		{"two gone, one held", []Assignment{usageOf("a", 1)}, []api.WorkloadID{"ns/a0", "ns/b0"}, true},
		{"the same victim twice counts once", []Assignment{usageOf("a", 1)}, []api.WorkloadID{"ns/a0", "ns/a0"}, false},
		{"unknown workload and queue ignored", []Assignment{usageOf("nope", 8)}, []api.WorkloadID{"ns/x", "ns/a0"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := q.FitsAfter(three, tc.held, tc.gone); got != tc.want {
				t.Fatalf("FitsAfter = %v, want %v", got, tc.want)
			}
			if !slices.Equal(q.usage, before) {
				t.Fatalf("usage changed: %v, was %v", q.usage, before)
			}
		})
	}
}

// Unreclaimable is Kueue's resourcesToReserve for a head without victims.
func TestUnreclaimable(t *testing.T) {
	cases := []struct {
		name    string
		reclaim api.PreemptionPolicy
		limit   string
		useA    int
		request int64
		want    int64 // 0: nothing held
	}{
		{"can always reclaim", api.PreemptAny, "", 1, 3, 0},
		{"within nominal: what is left of it", api.PreemptNever, "", 1, 2, 2},
		{"within nominal: up to the request", api.PreemptLowerPriority, "", 0, 3, 3},
		{"borrowing, no limit: the whole request", api.PreemptNever, "", 2, 4, 4},
		{"borrowing, limit 1: up to nominal plus limit", api.PreemptNever, "1", 2, 4, 3},
		{"nominal used up, not borrowing", api.PreemptNever, "", 4, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := holdQuota(t, tc.reclaim, tc.limit, tc.useA, 0)
			got := q.Unreclaimable(usageOf("a", tc.request))
			var held int64
			for _, f := range got {
				held += int64(f.Amount)
			}
			if held != tc.want {
				t.Fatalf("Unreclaimable = %v, want %d", got, tc.want)
			}
		})
	}
}

// A queue without a cohort lends nothing, so it holds nothing.
func TestUnreclaimableWithoutCohort(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("f").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "4").Obj()).Obj()).Obj()
	q, err := NewQuota(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Unreclaimable(usageOf("a", 2)); got != nil || q.MayHold("a") {
		t.Fatalf("Unreclaimable = %v, MayHold = %v; want nothing", got, q.MayHold("a"))
	}
}

// AssignBlocked answers Preempt, with the usage, where Assign answers NoFit because the
// queue may preempt nothing; a request beyond what preemption could ever free stays NoFit.
func TestAssignBlocked(t *testing.T) {
	q := holdQuota(t, api.PreemptNever, "", 1, 5) // b borrows 1 of a's quota: 2 free, a short of 3
	w := gt.MakeWorkload("ns", "w").Request(gpu, "3").Obj()
	if a := q.Assign(w, "a"); a.Mode != NoFit {
		t.Fatalf("Assign: mode %s, want NoFit", a.Mode)
	}
	a := q.AssignBlocked(w, "a")
	if a.Mode != Preempt || len(a.Usage) != 1 || a.Usage[0].Amount != 3 {
		t.Fatalf("AssignBlocked = %s %v, want Preempt with 3", a.Mode, a.Usage)
	}
	big := gt.MakeWorkload("ns", "big").Request(gpu, "9").Obj()
	if a := q.AssignBlocked(big, "a"); a.Mode != NoFit {
		t.Fatalf("AssignBlocked(9 of 8): mode %s, want NoFit", a.Mode)
	}
}

// A WithHeld copy counts the holds; FitsHeld gives the asker's own queue's hold back,
// and Hold keeps the copy in step with admissions.
func TestWithHeld(t *testing.T) {
	q := holdQuota(t, api.PreemptNever, "", 0, 2) // 2 of 8 used
	held := q.WithHeld([]Assignment{usageOf("a", 4)})
	if q.FitsAfter(usageOf("b", 2), nil, nil) != true {
		t.Fatal("the quota itself must not see the hold")
	}
	if held.FitsHeld(usageOf("b", 3), nil, nil, nil) {
		t.Fatal("b borrowing 1 of a's held quota fits the held copy")
	}
	if !held.FitsHeld(usageOf("a", 3), usageOf("a", 4).Usage, nil, nil) {
		t.Fatal("a's own hold must not stop a's workload")
	}
	held.Hold("b", usageOf("b", 2).Usage, 1)
	if held.FitsHeld(usageOf("b", 1), nil, nil, nil) {
		t.Fatal("after b admitted 2 more, nothing is left beside a's hold")
	}
}
