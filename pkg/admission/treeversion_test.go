package admission

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
)

// TreeVersion counts the admissions and releases of one cohort tree: the other trees'
// counts stay, a clone starts from the original's and moves on its own.
func TestTreeVersion(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("f").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "4").Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "4").Obj()).Obj(),
		gt.MakeClusterQueue("z").ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "4").Obj()).Obj()).Obj()
	q, err := NewQuota(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	versions := func(q *Quota) [3]int64 {
		var out [3]int64
		for i, cq := range []string{"a", "b", "z"} {
			v, ok := q.TreeVersion(cq)
			if !ok {
				t.Fatalf("TreeVersion(%s): no such ClusterQueue", cq)
			}
			out[i] = v
		}
		return out
	}
	if _, ok := q.TreeVersion("nope"); ok {
		t.Error("TreeVersion of a missing ClusterQueue answered")
	}
	start := versions(q)
	admitOne(t, q, "a", 0)
	if got := versions(q); got[0] != start[0]+1 || got[1] != got[0] || got[2] != start[2] {
		t.Fatalf("after an admission in a: %v (from %v); want a and b one on, z as it was", got, start)
	}
	clone := q.Clone()
	if err := q.Release("ns/a0"); err != nil {
		t.Fatal(err)
	}
	if got := versions(q); got[0] != start[0]+2 || got[2] != start[2] {
		t.Fatalf("after the release: %v (from %v); want a two on, z as it was", got, start)
	}
	admitOne(t, clone, "z", 0)
	if got, orig := versions(clone), versions(q); got[0] != start[0]+1 || got[2] != start[2]+1 || orig[2] != start[2] {
		t.Fatalf("clone %v, original %v (from %v): the clone keeps the count it was made with and moves alone", got, orig, start)
	}
}
