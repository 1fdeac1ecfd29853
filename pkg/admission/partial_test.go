package admission

import (
	"slices"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// The reducer shrinks every pod set with a minimum in proportion to its range, and
// leaves the others whole: index 0 is the full counts, the last index every minimum.
func TestReducerCounts(t *testing.T) {
	wl := gt.MakeWorkload("ns", "w").PodSet("fixed", 20).PodSet("two", 30).MinCount(10).PodSet("three", 15).MinCount(5).Obj()
	r := newReducer(wl)
	if r.total != 30 {
		t.Fatalf("total delta %d, want 30", r.total)
	}
	tests := []struct {
		index int32
		want  []int32
	}{
		{0, []int32{20, 30, 15}},
		{15, []int32{20, 20, 10}},
		{14, []int32{20, 21, 11}},
		{30, []int32{20, 10, 5}},
	}
	for _, tc := range tests {
		if got := r.countsAt(tc.index); !slices.Equal(got, tc.want) {
			t.Errorf("counts at %d = %v, want %v", tc.index, got, tc.want)
		}
	}
}

// A workload-wide gang minimum bounds the search: the reduced copy's pods are its whole
// gang, so it never has fewer than MinMember (found by the invariants property test).
func TestReducerKeepsMinMember(t *testing.T) {
	wl := gt.MakeWorkload("ns", "w").PodSet("a", 4).MinCount(1).PodSet("b", 4).MinCount(1).Obj()
	wl.MinMember = 5
	r := newReducer(wl)
	if got := sum(r.countsAt(r.last)); got < 5 || sum(r.countsAt(r.last+1)) >= 5 {
		t.Fatalf("deepest counts %v (%d pods): want the last index with at least 5 pods", r.countsAt(r.last), got)
	}
	// Only 4 pods would fit: below the gang, so nothing is admitted.
	red, _, ok := SearchReduced(wl, func(w *api.Workload) PartialFit {
		return PartialFit{OK: sum([]int32{w.PodSets[0].Count, w.PodSets[1].Count}) <= 4}
	})
	if ok {
		t.Errorf("admitted %d+%d pods, below the gang's 5", red.PodSets[0].Count, red.PodSets[1].Count)
	}
}

// A reduced copy is the admitted pods as one gang; the original is untouched.
func TestReducedCopy(t *testing.T) {
	wl := gt.MakeWorkload("ns", "w").PodSet("main", 20).MinCount(9).Obj()
	wl.MinMember = 9
	red := Reduced(wl, []int32{12})
	if red.PodSets[0].Count != 12 || red.PodSets[0].GangCount() != 12 || red.GangSize() != 12 {
		t.Errorf("reduced count %d gang %d size %d, want 12 of each", red.PodSets[0].Count, red.PodSets[0].GangCount(), red.GangSize())
	}
	if wl.PodSets[0].Count != 20 || wl.PodSets[0].MinCount != 9 || wl.MinMember != 9 || red.ID() != wl.ID() {
		t.Errorf("original changed to %+v / min member %d, or the copy is another workload", wl.PodSets[0], wl.MinMember)
	}
}

// AssignPartial: the full count when it fits or finds victims, else the largest counts
// that do; nothing below the minimum; the assignment says what was asked.
func TestAssignPartial(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h").Obj()).ClusterQueues(
		gt.MakeClusterQueue("cq").Preemption(api.PreemptLowerPriority, api.PreemptNever).
			ResourceGroup(gt.MakeFlavorQuotas("h").Resource(gpu, "16").Obj()).Obj()).Obj()
	tests := []struct {
		name     string
		used     string // GPUs taken by a running workload of priority 0
		prio     int32  // the new workload's priority
		pods     int32
		min      int32
		want     int32 // pods admitted (or preempted for); 0: none
		preempts bool
		text     string
	}{
		{name: "fits whole", pods: 16, min: 4, want: 16},
		{name: "reduced to the free quota", used: "7", pods: 16, min: 4, want: 9, text: "admitted 9 of 16 pods (partial admission)"},
		{name: "over the max quota: reduced", pods: 20, min: 4, want: 16, text: "admitted 16 of 20 pods (partial admission)"},
		{name: "minimum does not fit", used: "13", pods: 16, min: 4},
		{name: "no minimum: not reduced", used: "7", pods: 16},
		{name: "full count by preemption beats fewer pods now", used: "7", prio: 5, pods: 16, min: 4, want: 16, preempts: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := NewQuota(objs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.used != "" {
				admitAll(t, q, []kueueAdmitted{adm("running", "cq", 0, use("h", gpu, tc.used))})
			}
			wl := gt.MakeWorkload("ns", "new").Priority(tc.prio).Pods(tc.pods).MinCount(tc.min).Request(gpu, "1").Obj()
			res := q.AssignPartial(wl, "cq", nil)
			a := res.Assignment
			ok := a.Fits() || len(res.Victims.Victims) > 0
			if got := res.Workload.PodSets[0].Count; ok != (tc.want > 0) || (ok && got != tc.want) {
				t.Fatalf("mode %s with %d pods (victims %d), want %d pods", a.Mode, got, len(res.Victims.Victims), tc.want)
			}
			if (len(res.Victims.Victims) > 0) != tc.preempts {
				t.Errorf("victims %+v, want preemption %v", res.Victims.Victims, tc.preempts)
			}
			if ok && a.PartialText() != tc.text {
				t.Errorf("PartialText %q, want %q", a.PartialText(), tc.text)
			}
		})
	}
}

// Short bounds by the fewest pods partial admission could admit, not the full count.
func TestShortCountsTheMinimum(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h").Obj()).ClusterQueues(
		gt.MakeClusterQueue("cq").ResourceGroup(gt.MakeFlavorQuotas("h").Resource(gpu, "8").Obj()).Obj()).Obj()
	q, err := NewQuota(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reducible := gt.MakeWorkload("ns", "r").Pods(20).MinCount(8).Request(gpu, "1").Obj()
	whole := gt.MakeWorkload("ns", "w").Pods(20).Request(gpu, "1").Obj()
	if q.Short(reducible, "cq") || !q.Short(whole, "cq") {
		t.Errorf("Short: reducible %v (want false), whole %v (want true)", q.Short(reducible, "cq"), q.Short(whole, "cq"))
	}
}
