package engine

import (
	"slices"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// Pending workloads of one ClusterQueue are tried by priority, then age, then name, and
// within a priority the less used LocalQueue first where admission fair sharing is on;
// positions count within the ClusterQueue.
func TestOrderPriorityThenAge(t *testing.T) {
	ps := []Pending{
		pending(gt.MakeWorkload("ns", "old-low").CPU(1).Priority(0).Created(1*time.Second).Obj(), "cq"),
		pending(gt.MakeWorkload("ns", "new-high").CPU(1).Priority(5).Created(9*time.Second).Obj(), "cq"),
		pending(gt.MakeWorkload("ns", "old-high").CPU(1).Priority(5).Created(2*time.Second).Obj(), "cq"),
		pending(gt.MakeWorkload("ns", "twin-b").CPU(1).Created(1*time.Second).Obj(), "other"),
		pending(gt.MakeWorkload("ns", "twin-a").CPU(1).Created(1*time.Second).Obj(), "other"),
	}
	got, pos := visitAll(newVisits(ps, newKeyer(newFakeQuota(), nil, ps, nil)))
	var ids []api.WorkloadID
	for _, p := range got {
		ids = append(ids, p.Workload.ID())
	}
	want := []api.WorkloadID{"ns/old-high", "ns/new-high", "ns/old-low", "ns/twin-a", "ns/twin-b"}
	if !slices.Equal(ids, want) {
		t.Fatalf("order %v, want %v", ids, want)
	}
	if pos["ns/old-low"] != 3 || pos["ns/twin-a"] != 1 || pos["ns/twin-b"] != 2 {
		t.Fatalf("positions %v, want old-low 3rd in cq, twin-a and twin-b 1st and 2nd in other", pos)
	}
	// With admission fair sharing, a less used LocalQueue goes before an older workload
	// of the same priority, but not before a higher priority.
	light := pending(gt.MakeWorkload("ns", "light").CPU(1).Priority(5).Created(5*time.Second).Obj(), "cq")
	heavy := pending(gt.MakeWorkload("ns", "heavy").CPU(1).Priority(5).Created(3*time.Second).Obj(), "cq")
	urgent := pending(gt.MakeWorkload("ns", "urgent").CPU(1).Priority(9).Created(4*time.Second).Obj(), "cq")
	heavy.LocalQueueUsage, urgent.LocalQueueUsage = 100, 100
	all := []Pending{heavy, urgent, light}
	got, _ = visitAll(newVisits(all, newKeyer(newFakeQuota(), nil, all, nil)))
	if got[0].Workload.Name != "urgent" || got[1].Workload.Name != "light" {
		t.Fatalf("order %s, %s, %s; want urgent, light, heavy", got[0].Workload.Name, got[1].Workload.Name, got[2].Workload.Name)
	}
}

// visitAll pops every visit in order.
func visitAll(v *visits) ([]Pending, map[string]int) {
	var out []Pending
	for p, ok := v.pop(); ok; p, ok = v.pop() {
		out = append(out, p)
	}
	return out, positions(v)
}

// positions are the visits' places within their ClusterQueues, by workload ID.
func positions(v *visits) map[string]int {
	out := map[string]int{}
	for w, n := range v.pos {
		out[string(w.ID())] = n
	}
	return out
}

// A member handed in while the cycle runs is visited at its own place: before the
// sorted workloads ordered after it, after those before it, whichever it arrives behind.
func TestVisitsMergeHandedInMembers(t *testing.T) {
	mk := func(name string, created time.Duration) Pending {
		return pending(gt.MakeWorkload("ns", name).CPU(1).Created(created).Obj(), "cq")
	}
	ps := []Pending{mk("a", 1*time.Second), mk("c", 3*time.Second), mk("e", 5*time.Second)}
	v := newVisits(ps, newKeyer(newFakeQuota(), nil, ps, nil))
	var ids []string
	p, _ := v.pop()
	ids = append(ids, p.Workload.Name)
	v.add(mk("d", 4*time.Second))
	v.add(mk("b", 2*time.Second))
	for p, ok := v.pop(); ok; p, ok = v.pop() {
		ids = append(ids, p.Workload.Name)
	}
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(ids, want) {
		t.Fatalf("visits %v, want %v", ids, want)
	}
	if positions(v)["ns/d"] != 4 || !v.fetched["ns/b"] || v.fetched["ns/c"] {
		t.Errorf("positions %v, handed in %v", v.pos, v.fetched)
	}
}

// Property: keys that tie on every field but the ID order as their IDs do, whatever
// the IDs' lengths and shared prefixes (the packed prefix only spares reading them).
func TestHeadKeyOrdersByID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]rune("ab/-09z"))
		gen := rapid.StringOfN(alphabet, 0, 24, -1)
		base := rapid.StringOfN(alphabet, 0, 18, -1).Draw(t, "shared prefix")
		a, b := base+gen.Draw(t, "a"), base+gen.Draw(t, "b")
		ka, kb := headKey{id: a}, headKey{id: b}
		ka.idHi, ka.idLo = idPrefix(a)
		kb.idHi, kb.idLo = idPrefix(b)
		if got, want := ka.less(kb), a < b; got != want {
			t.Fatalf("less(%q, %q) = %v, want %v", a, b, got, want)
		}
	})
}
