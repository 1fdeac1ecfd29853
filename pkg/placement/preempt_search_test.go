package placement

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// peFakeWith builds a fake cluster of nodes with free GPUs and gangs holding GPUs on
// nodes; holds maps a workload to per-node GPU counts.
func peFakeWith(free []int, holds map[api.WorkloadID][]int, pods, per int) *peFake {
	return &peFake{free: append([]int(nil), free...), holds: holds, pods: pods, per: per}
}

func peIDs(rs []Running) []api.WorkloadID {
	out := make([]api.WorkloadID, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func peCodes(ss []Skipped) map[api.WorkloadID]SkipCode {
	out := map[api.WorkloadID]SkipCode{}
	for _, s := range ss {
		out[s.Workload] = s.Code
	}
	return out
}

func peSkip(ss []Skipped, id api.WorkloadID) Skipped {
	for _, s := range ss {
		if s.Workload == id {
			return s
		}
	}
	return Skipped{}
}

func TestChooseVictims(t *testing.T) {
	preemptor := Preemptor{ID: "ns/big", Priority: 10, Created: peNow}
	cases := []struct {
		name    string
		free    []int                    // free GPUs per node before preemption
		holds   map[api.WorkloadID][]int // GPUs each running gang holds per node
		running []Running
		pods    int // preemptor pods, each needing per GPUs on one node
		per     int
		budgets map[string]api.DisruptionBudget
		history []PreemptionRecord
		policy  api.PreemptionPolicy
		// want: outcome, the victims in order, and the skip code of named workloads.
		wantOutcome PreemptOutcome
		wantVictims []api.WorkloadID
		wantSkipped map[api.WorkloadID]SkipCode
	}{
		{
			name: "fits already: nothing preempted",
			free: []int{8}, holds: map[api.WorkloadID][]int{"a": {0}},
			running: []Running{MakeRunning("a").Priority(1).GPUs(0).Obj()},
			pods:    1, per: 8,
			wantOutcome: PreemptNotNeeded,
		},
		{
			name: "lowest priority first",
			free: []int{0, 0}, holds: map[api.WorkloadID][]int{"low": {8, 0}, "mid": {0, 8}},
			running: []Running{
				MakeRunning("mid").Priority(5).GPUs(8).Obj(),
				MakeRunning("low").Priority(1).GPUs(8).Obj(),
			},
			pods: 1, per: 8,
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"low"},
			wantSkipped: map[api.WorkloadID]SkipCode{"mid": SkipNotNeeded},
		},
		{
			name: "spot before on-demand at equal priority",
			free: []int{0, 0}, holds: map[api.WorkloadID][]int{"od": {8, 0}, "spot": {0, 8}},
			running: []Running{
				MakeRunning("od").Priority(1).GPUs(8).Obj(),
				MakeRunning("spot").Priority(1).Spot().GPUs(8).Obj(),
			},
			pods: 1, per: 8,
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"spot"},
		},
		{
			name: "least lost work: the recently checkpointed gang goes",
			free: []int{0, 0}, holds: map[api.WorkloadID][]int{"old": {8, 0}, "ckpt": {0, 8}},
			running: []Running{
				MakeRunning("old").Priority(1).GPUs(8).Obj(),
				MakeRunning("ckpt").Priority(1).GPUs(8).Checkpoint(peNow.Add(-time.Minute)).Obj(),
			},
			pods: 1, per: 8,
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"ckpt"},
		},
		{
			name: "higher or equal priority is never a victim",
			free: []int{0}, holds: map[api.WorkloadID][]int{"hi": {8}},
			running: []Running{MakeRunning("hi").Priority(10).GPUs(8).Obj()},
			pods:    1, per: 8,
			wantOutcome: PreemptNoCandidates,
			wantSkipped: map[api.WorkloadID]SkipCode{"hi": SkipPriority},
		},
		{
			name: "equal but newer priority under LowerOrNewerEqualPriority",
			free: []int{0}, holds: map[api.WorkloadID][]int{"newer": {8}},
			running: []Running{MakeRunning("newer").Priority(10).Created(peNow.Add(time.Second)).GPUs(8).Obj()},
			pods:    1, per: 8,
			policy:      api.PreemptLowerOrNewerEqualPriority,
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"newer"},
		},
		{
			name: "policy Never",
			free: []int{0}, holds: map[api.WorkloadID][]int{"a": {8}},
			running: []Running{MakeRunning("a").GPUs(8).Obj()},
			pods:    1, per: 8,
			policy:      api.PreemptNever,
			wantOutcome: PreemptPolicyNever,
			wantSkipped: map[api.WorkloadID]SkipCode{"a": SkipPriority},
		},
		{
			name: "min runtime protects a young gang; the older one goes",
			free: []int{0, 0}, holds: map[api.WorkloadID][]int{"young": {8, 0}, "old": {0, 8}},
			running: []Running{
				MakeRunning("young").Spot().Started(peNow.Add(-5 * time.Minute)).MinRuntime(time.Hour).GPUs(8).Obj(),
				MakeRunning("old").Started(peNow.Add(-3 * time.Hour)).MinRuntime(time.Hour).GPUs(8).Obj(),
			},
			pods: 1, per: 8,
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"old"},
			wantSkipped: map[api.WorkloadID]SkipCode{"young": SkipMinRuntime},
		},
		{
			name: "not preemptible",
			free: []int{0}, holds: map[api.WorkloadID][]int{"a": {8}},
			running: []Running{MakeRunning("a").NotPreemptible().GPUs(8).Obj()},
			pods:    1, per: 8,
			wantOutcome: PreemptNoCandidates,
			wantSkipped: map[api.WorkloadID]SkipCode{"a": SkipNotPreemptible},
		},
		{
			name: "disruption budget: 8 of 12 GPUs already used in the window",
			free: []int{0, 0}, holds: map[api.WorkloadID][]int{"q1": {8, 0}, "q2": {0, 8}},
			running: []Running{
				MakeRunning("q1").Queue("one").Spot().GPUs(8).Obj(),
				MakeRunning("q2").Queue("two").GPUs(8).Obj(),
			},
			pods: 1, per: 8,
			budgets: map[string]api.DisruptionBudget{"one": {MaxGPUs: 12, Window: time.Hour}},
			history: []PreemptionRecord{
				{Workload: "x", Queue: "one", At: peNow.Add(-10 * time.Minute), GPUMilli: 8000},
				{Workload: "y", Queue: "one", At: peNow.Add(-2 * time.Hour), GPUMilli: 8000}, // outside the window
			},
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"q2"},
			wantSkipped: map[api.WorkloadID]SkipCode{"q1": SkipBudget},
		},
		{
			name: "budget is not spent on a cheap gang that does not help",
			// "tiny" goes first in order and would use 1 of the 8-GPU budget, leaving
			// too little for "big", the only gang whose removal helps.
			free: []int{3, 0}, holds: map[api.WorkloadID][]int{"tiny": {1, 0}, "big": {0, 8}},
			running: []Running{
				MakeRunning("tiny").Queue("q").Spot().GPUs(1).Obj(),
				MakeRunning("big").Queue("q").GPUs(8).Obj(),
			},
			pods: 1, per: 8,
			budgets:     map[string]api.DisruptionBudget{"q": {MaxGPUs: 8, Window: time.Hour}},
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"big"},
			wantSkipped: map[api.WorkloadID]SkipCode{"tiny": SkipNotNeeded},
		},
		{
			name: "removing everything still does not fit: no victims",
			free: []int{0, 0}, holds: map[api.WorkloadID][]int{"a": {4, 0}, "b": {0, 4}},
			running: []Running{
				MakeRunning("a").GPUs(4).Obj(),
				MakeRunning("b").GPUs(4).Obj(),
			},
			pods: 1, per: 8,
			wantOutcome: PreemptStillNoFit,
			wantSkipped: map[api.WorkloadID]SkipCode{"a": SkipNoHelp, "b": SkipNoHelp},
		},
		{
			name: "minimised: a cheap gang on a node that cannot help is put back",
			// "tiny" (1 GPU, node 0) goes first in order but only "big" on node 1 frees
			// a whole 8-GPU node.
			free: []int{3, 0}, holds: map[api.WorkloadID][]int{"tiny": {1, 0}, "big": {0, 8}},
			running: []Running{
				MakeRunning("tiny").Spot().GPUs(1).Obj(),
				MakeRunning("big").GPUs(8).Obj(),
			},
			pods: 1, per: 8,
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"big"},
			wantSkipped: map[api.WorkloadID]SkipCode{"tiny": SkipNotNeeded},
		},
		{
			name: "a gang needs two victims",
			free: []int{0, 0, 0}, holds: map[api.WorkloadID][]int{"a": {8, 0, 0}, "b": {0, 8, 0}, "c": {0, 0, 8}},
			running: []Running{
				MakeRunning("a").Priority(1).GPUs(8).Obj(),
				MakeRunning("b").Priority(2).GPUs(8).Obj(),
				MakeRunning("c").Priority(3).GPUs(8).Obj(),
			},
			pods: 2, per: 8,
			wantOutcome: PreemptFound, wantVictims: []api.WorkloadID{"a", "b"},
			wantSkipped: map[api.WorkloadID]SkipCode{"c": SkipNotNeeded},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := peFakeWith(tc.free, tc.holds, tc.pods, tc.per)
			req := PreemptionRequest{Preemptor: preemptor, Policy: tc.policy, Running: tc.running,
				Budgets: tc.budgets, History: tc.history, Now: peNow}
			got := chooseVictims(f, req)
			if got.outcome != tc.wantOutcome {
				t.Fatalf("outcome = %s, want %s (skipped %+v)", got.outcome, tc.wantOutcome, got.skipped)
			}
			if fmt.Sprint(peIDs(got.chosen)) != fmt.Sprint(tc.wantVictims) && (len(got.chosen) > 0 || len(tc.wantVictims) > 0) {
				t.Errorf("victims = %v, want %v", peIDs(got.chosen), tc.wantVictims)
			}
			codes := peCodes(got.skipped)
			for id, want := range tc.wantSkipped {
				if codes[id] != want {
					t.Errorf("skip code of %s = %q, want %q (all: %+v)", id, codes[id], want, got.skipped)
				}
			}
			if f.mark() != 0 {
				t.Errorf("what-if left %d releases behind", f.mark())
			}
		})
	}
}

// peGenScenario draws a fake cluster with running gangs of random priorities, spot flags,
// checkpoints and sizes, and a preemptor gang.
func peGenScenario(t *rapid.T) (*peFake, PreemptionRequest) {
	nodes := rapid.IntRange(1, 6).Draw(t, "nodes")
	free := make([]int, nodes)
	capLeft := make([]int, nodes)
	for i := range free {
		free[i] = rapid.IntRange(0, 3).Draw(t, "free")
		capLeft[i] = 8 - free[i]
	}
	holds := map[api.WorkloadID][]int{}
	var running []Running
	for g := 0; ; g++ {
		n := rapid.IntRange(0, nodes-1).Draw(t, "node")
		if capLeft[n] == 0 {
			break
		}
		size := rapid.IntRange(1, capLeft[n]).Draw(t, "size")
		capLeft[n] -= size
		id := api.WorkloadID(fmt.Sprintf("w%02d", g))
		h := make([]int, nodes)
		h[n] = size
		holds[id] = h
		w := MakeRunning(string(id)).Priority(int32(rapid.IntRange(0, 3).Draw(t, "prio"))).GPUs(int64(size)).
			Started(peNow.Add(-time.Duration(rapid.IntRange(1, 120).Draw(t, "age")) * time.Minute)).
			MinRuntime(time.Duration(rapid.IntRange(0, 60).Draw(t, "minrt")) * time.Minute).
			Queue(rapid.SampledFrom([]string{"a", "b"}).Draw(t, "queue"))
		if rapid.Bool().Draw(t, "spot") {
			w.Spot()
		}
		running = append(running, w.Obj())
	}
	f := peFakeWith(free, holds, rapid.IntRange(1, 4).Draw(t, "pods"), rapid.IntRange(1, 8).Draw(t, "per"))
	req := PreemptionRequest{
		Preemptor: Preemptor{ID: "p", Priority: 2, Created: peNow}, Running: running, Now: peNow,
		Budgets: map[string]api.DisruptionBudget{"a": {MaxGPUs: int64(rapid.IntRange(0, 16).Draw(t, "budget")), Window: time.Hour}},
	}
	return f, req
}

// Invariants of victim selection on random scenarios: victims are whole, eligible
// gangs within budget; once removed, the preemptor fits; no victim can be spared; and
// when removing every eligible gang does not help, nobody is chosen.
func TestChooseVictimsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f, req := peGenScenario(t)
		got := chooseVictims(f, req)
		if f.mark() != 0 {
			t.Fatalf("what-if not rolled back")
		}
		byID := map[api.WorkloadID]Running{}
		for _, r := range req.Running {
			byID[r.ID] = r
		}
		eligibleIDs, _ := eligible(req)
		allFree := fitsWithout(f, 0, eligibleIDs)
		f.undo(0)
		switch got.outcome {
		case PreemptFound:
			if len(got.chosen) == 0 {
				t.Fatalf("found with no victims")
			}
			var budgetUsed int64
			for _, v := range got.chosen {
				r := byID[v.ID]
				if r.Priority >= req.Preemptor.Priority {
					t.Fatalf("victim %s has priority %d >= %d", v.ID, r.Priority, req.Preemptor.Priority)
				}
				if peNow.Sub(r.StartedAt) < r.MinRuntime {
					t.Fatalf("victim %s is younger than its min runtime", v.ID)
				}
				if r.Queue == "a" {
					budgetUsed += int64(r.GPUMilli)
				}
			}
			if b := req.Budgets["a"]; b.MaxGPUs > 0 && budgetUsed > b.MaxGPUs*1000 {
				t.Fatalf("queue a lost %d milli-GPU, budget %d GPUs", budgetUsed, b.MaxGPUs)
			}
			if !fitsWithout(f, 0, got.chosen) {
				t.Fatalf("preemptor does not fit after removing %v", peIDs(got.chosen))
			}
			for i := range got.chosen {
				rest := append(append([]Running(nil), got.chosen[:i]...), got.chosen[i+1:]...)
				if len(rest) > 0 && fitsWithout(f, 0, rest) {
					t.Fatalf("victim %s could be spared", got.chosen[i].ID)
				}
			}
			f.undo(0)
		case PreemptStillNoFit, PreemptNoCandidates:
			if len(got.chosen) != 0 {
				t.Fatalf("%s with victims %v", got.outcome, peIDs(got.chosen))
			}
			if got.outcome == PreemptStillNoFit && allFree && req.Budgets["a"].MaxGPUs == 0 {
				t.Fatalf("still no fit, yet removing every eligible gang fits")
			}
		case PreemptNotNeeded:
			if !f.fits() {
				t.Fatalf("not needed, yet the gang does not fit")
			}
		}
		if got.outcome != PreemptFound && len(got.chosen) != 0 {
			t.Fatalf("victims chosen with outcome %s", got.outcome)
		}
		// Every running workload that is not a victim is explained.
		explained := peCodes(got.skipped)
		for _, r := range req.Running {
			_, skipped := explained[r.ID]
			chosen := false
			for _, v := range got.chosen {
				chosen = chosen || v.ID == r.ID
			}
			if skipped == chosen {
				t.Fatalf("workload %s: chosen=%v, explained=%v", r.ID, chosen, skipped)
			}
		}
	})
}

// flakyFits answers fits() true and false in turn: a probe whose placement is not a
// pure function of the state (ties broken by a random source that moves between probes).
type flakyFits struct{ *peFake }

func (f flakyFits) fits() bool {
	f.fitCall++
	return f.fitCall%2 == 1
}

// A probe that says the gang fits without every candidate and then that it does not fit
// without the same candidates gives no victims rather than a partial answer (or a crash).
func TestSearchSurvivesAProbeThatChangesItsAnswer(t *testing.T) {
	f := &peFake{free: []int{0}, holds: map[api.WorkloadID][]int{"ns/a": {8}}, pods: 1, per: 8}
	list := []Running{MakeRunning("ns/a").Obj()}
	out := searchWithin(flakyFits{f}, f.mark(), list)
	if out.outcome != PreemptStillNoFit || len(out.chosen) != 0 {
		t.Fatalf("outcome %v, chosen %v; want PreemptStillNoFit and no victims", out.outcome, out.chosen)
	}
}
