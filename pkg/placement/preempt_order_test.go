package placement

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

func TestLostWork(t *testing.T) {
	cases := []struct {
		name string
		r    Running
		// want: milli-GPU-seconds lost if stopped at peNow.
		want MilliGPUSeconds
	}{
		{"never checkpointed: since start", MakeRunning("a").GPUs(2).Started(peNow.Add(-10 * time.Minute)).Obj(), 2000 * 600},
		{"checkpointed: since the checkpoint", MakeRunning("a").GPUs(2).Started(peNow.Add(-time.Hour)).Checkpoint(peNow.Add(-90 * time.Second)).Obj(), 2000 * 90},
		{"checkpoint older than a restart counts from the start", MakeRunning("a").GPUs(1).Started(peNow.Add(-time.Minute)).Checkpoint(peNow.Add(-time.Hour)).Obj(), 1000 * 60},
		{"partial seconds are dropped", MakeRunning("a").GPUs(1).Started(peNow.Add(-1500 * time.Millisecond)).Obj(), 1000},
		{"start in the future: nothing lost", MakeRunning("a").GPUs(1).Started(peNow.Add(time.Minute)).Obj(), 0},
		{"no GPU: nothing lost", MakeRunning("a").Obj(), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := LostWork(tc.r, peNow); got != tc.want {
				t.Fatalf("LostWork = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestOrderCandidates(t *testing.T) {
	in := []Running{
		MakeRunning("on-demand-p0").Priority(0).GPUs(1).Obj(),
		MakeRunning("spot-p1").Priority(1).Spot().GPUs(1).Obj(),
		MakeRunning("spot-p0-old").Priority(0).Spot().GPUs(1).Obj(),
		MakeRunning("spot-p0-fresh").Priority(0).Spot().GPUs(1).Checkpoint(peNow.Add(-time.Minute)).Obj(),
		MakeRunning("spot-p0-fresh-big").Priority(0).Spot().GPUs(8).Checkpoint(peNow.Add(-time.Minute / 8)).Obj(),
		MakeRunning("spot-p0-fresh-b").Priority(0).Spot().GPUs(1).Checkpoint(peNow.Add(-time.Minute)).Obj(),
	}
	orderCandidates(in, peNow)
	// want: priority, then spot, then lost work (the 8-GPU gang loses 8000×7s = the
	// least), then more GPU, then ID.
	want := "[spot-p0-fresh-big spot-p0-fresh spot-p0-fresh-b spot-p0-old on-demand-p0 spot-p1]"
	if got := fmt.Sprint(peIDs(in)); got != want {
		t.Fatalf("order = %s\nwant    %s", got, want)
	}
}

func TestPriorityAllows(t *testing.T) {
	p := Preemptor{ID: "p", Priority: 5, Created: peNow}
	cases := []struct {
		policy api.PreemptionPolicy
		r      Running
		// want: whether the policy lets p preempt r.
		want bool
	}{
		{"", MakeRunning("lower").Priority(4).Obj(), true},
		{"", MakeRunning("equal").Priority(5).Obj(), false},
		{api.PreemptLowerPriority, MakeRunning("higher").Priority(6).Obj(), false},
		{api.PreemptLowerOrNewerEqualPriority, MakeRunning("equal-newer").Priority(5).Created(peNow.Add(time.Second)).Obj(), true},
		{api.PreemptLowerOrNewerEqualPriority, MakeRunning("equal-older").Priority(5).Created(peNow.Add(-time.Second)).Obj(), false},
		{api.PreemptAny, MakeRunning("higher").Priority(9).Obj(), true},
		// Only the empty policy defaults to LowerPriority; Never and unknown values allow none.
		{api.PreemptNever, MakeRunning("lower").Priority(0).Obj(), false},
		{"Sometimes", MakeRunning("lower").Priority(0).Obj(), false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s", tc.policy, tc.r.ID), func(t *testing.T) {
			ok, why := priorityAllows(tc.policy, p, tc.r)
			if ok != tc.want || (!ok && why == "") {
				t.Fatalf("allows = %v (%q), want %v", ok, why, tc.want)
			}
		})
	}
}

func TestBudgetLedger(t *testing.T) {
	req := PreemptionRequest{
		Now:     peNow,
		Budgets: map[string]api.DisruptionBudget{"a": {MaxGPUs: 16, Window: time.Hour}, "b": {MaxGPUs: 0}},
		History: []PreemptionRecord{
			{Queue: "a", At: peNow.Add(-59 * time.Minute), GPUMilli: 8000},
			{Queue: "a", At: peNow.Add(-time.Hour), GPUMilli: 8000},  // at the window edge: out
			{Queue: "a", At: peNow.Add(time.Minute), GPUMilli: 8000}, // in the future: ignored
			{Queue: "b", At: peNow, GPUMilli: 1 << 40},
		},
	}
	l := newBudgetLedger(req)
	steps := []struct {
		r Running
		// want: whether the ledger lets it go.
		want bool
	}{
		{MakeRunning("a1").Queue("a").GPUs(8).Obj(), true},
		{MakeRunning("a2").Queue("a").GPUs(1).Obj(), false}, // 8 + 8 used, budget 16
		{MakeRunning("b1").Queue("b").GPUs(512).Obj(), true},
		{MakeRunning("c1").Queue("unbudgeted").GPUs(512).Obj(), true},
	}
	for _, s := range steps {
		if ok, why := l.take(s.r); ok != s.want || (!ok && why == "") {
			t.Fatalf("take(%s) = %v %q, want %v", s.r.ID, ok, why, s.want)
		}
	}
	l.give(steps[0].r)
	if ok, _ := l.take(steps[1].r); !ok {
		t.Fatalf("giving back 8 GPUs did not make room for 1")
	}
}

// Property: the order is a strict total order (irreflexive, antisymmetric, complete
// over distinct IDs), so sorting is deterministic whatever the input order.
func TestCandidateOrderIsTotal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gen := func(label string) candidateKey {
			return candidateKey{
				priority: int32(rapid.IntRange(0, 2).Draw(t, label+"p")),
				onDemand: rapid.IntRange(0, 1).Draw(t, label+"s"),
				lost:     MilliGPUSeconds(rapid.IntRange(0, 3).Draw(t, label+"l")),
				gpu:      0,
				id:       api.WorkloadID(rapid.SampledFrom([]string{"x", "y", "z"}).Draw(t, label+"id")),
			}
		}
		a, b := gen("a"), gen("b")
		if a.less(a) {
			t.Fatalf("%+v < itself", a)
		}
		if a.less(b) && b.less(a) {
			t.Fatalf("%+v and %+v both less", a, b)
		}
		if a.id != b.id && !a.less(b) && !b.less(a) {
			t.Fatalf("%+v and %+v incomparable", a, b)
		}
	})
}
