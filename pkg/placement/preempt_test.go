package placement

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"pgregory.net/rapid"
)

// peFullCluster is four 8-GPU nodes, n01 and n02 spot, each held by one 8-GPU gang.
func peFullCluster(t *testing.T, runs ...Running) (*cluster.Snapshot, []Running) {
	t.Helper()
	var gangs []peGang
	for i, r := range runs {
		gangs = append(gangs, peGang{run: r, perPod: 8, nodes: []string{fmt.Sprintf("n%02d", i)}})
	}
	return peBind(t, peNodes(t, len(runs), 8, "n01", "n02"), gangs)
}

// Scenario: among equal-priority gangs, preemption takes the spot gang that loses the
// least work (checkpointed 5 minutes ago), not the on-demand one nor the spot gang
// whose last checkpoint is 50 minutes old.
func TestSelectVictimsPicksSpotGangWithLeastLostWork(t *testing.T) {
	snap, running := peFullCluster(t,
		MakeRunning("ns/on-demand").Priority(1).Checkpoint(peNow.Add(-time.Minute)).Obj(),
		MakeRunning("ns/spot-stale").Priority(1).Spot().Checkpoint(peNow.Add(-50*time.Minute)).Obj(),
		MakeRunning("ns/spot-fresh").Priority(1).Spot().Checkpoint(peNow.Add(-5*time.Minute)).Grace(2*time.Minute).Obj(),
		MakeRunning("ns/important").Priority(50).Obj(),
	)
	ov := snap.Overlay()
	req := PreemptionRequest{
		Preemptor: Preemptor{ID: "ns/big", Priority: 10, Created: peNow},
		Running:   running, Now: peNow, GracePeriod: 30 * time.Second,
	}
	res, err := SelectVictims(ov, peFirstFit("ns/big", 1, 8), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PreemptFound || len(res.Victims) != 1 || res.Victims[0].Workload != "ns/spot-fresh" {
		t.Fatalf("outcome %s victims %+v, want ns/spot-fresh (skipped %+v)", res.Outcome, res.Victims, res.Skipped)
	}
	v := res.Victims[0]
	if want := MilliGPUSeconds(8000 * 300); v.LostWork != want || res.LostWork != want {
		t.Errorf("lost work = %d (total %d), want %d", v.LostWork, res.LostWork, want)
	}
	if fmt.Sprint(v.Nodes) != "[n02]" || res.FreedGPUMilli != 8000 {
		t.Errorf("victim nodes %v freed %d, want [n02] 8000", v.Nodes, res.FreedGPUMilli)
	}
	if len(res.Notices) != 1 || !res.Notices[0].EvictAt.Equal(peNow.Add(2*time.Minute)) {
		t.Errorf("notices = %+v, want eviction 2m after notice (the victim's own grace)", res.Notices)
	}
	if res.Placement == nil || len(res.Pods) != 1 || res.Pods[0].Node != "n02" {
		t.Errorf("enabled placement = %+v, want the preemptor's pod on n02", res.Pods)
	}
	codes := peCodes(res.Skipped)
	if codes["ns/important"] != SkipPriority || codes["ns/on-demand"] != SkipNotNeeded {
		t.Errorf("skip codes = %v", codes)
	}
	if len(ov.Changes()) != 0 {
		t.Errorf("overlay changed: %v", ov.Changes())
	}
}

// Scenario: a minimum runtime protects a young gang even when it is the cheapest.
func TestSelectVictimsMinRuntimeProtectsYoungGang(t *testing.T) {
	cases := []struct {
		name    string
		started time.Time // of the only low-priority gang
		// want: outcome and the skip code of that gang.
		wantOutcome PreemptOutcome
		wantCode    SkipCode
	}{
		{"10 minutes into a 1h minimum", peNow.Add(-10 * time.Minute), PreemptNoCandidates, SkipMinRuntime},
		{"exactly its minimum", peNow.Add(-time.Hour), PreemptFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap, running := peFullCluster(t,
				MakeRunning("ns/young").Spot().Started(tc.started).MinRuntime(time.Hour).Obj(),
				MakeRunning("ns/high").Priority(99).Obj())
			res, err := SelectVictims(snap.Overlay(), peFirstFit("ns/p", 1, 8),
				PreemptionRequest{Preemptor: Preemptor{ID: "ns/p", Priority: 5}, Running: running, Now: peNow})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.wantOutcome || peCodes(res.Skipped)["ns/young"] != tc.wantCode {
				t.Fatalf("outcome %s skipped %+v, want %s with code %q", res.Outcome, res.Skipped, tc.wantOutcome, tc.wantCode)
			}
			if s := peSkip(res.Skipped, "ns/young"); tc.wantCode == SkipMinRuntime && !strings.Contains(s.Detail, "minimum runtime 1h0m0s") {
				t.Errorf("min-runtime skip does not say why: %+v", s)
			}
		})
	}
}

// Scenario: the disruption budget caps preemption per queue and window.
func TestSelectVictimsDisruptionBudget(t *testing.T) {
	budget := map[string]api.DisruptionBudget{"research": {MaxGPUs: 8, Window: time.Hour}}
	cases := []struct {
		name    string
		history []PreemptionRecord
		// want: outcome.
		wantOutcome PreemptOutcome
	}{
		{"budget unused", nil, PreemptFound},
		{"8 GPUs preempted 30 minutes ago", []PreemptionRecord{{Queue: "research", At: peNow.Add(-30 * time.Minute), GPUMilli: 8000}}, PreemptNoCandidates},
		{"8 GPUs preempted 61 minutes ago", []PreemptionRecord{{Queue: "research", At: peNow.Add(-61 * time.Minute), GPUMilli: 8000}}, PreemptFound},
		{"other queue's history does not count", []PreemptionRecord{{Queue: "prod", At: peNow.Add(-time.Minute), GPUMilli: 64000}}, PreemptFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap, running := peFullCluster(t,
				MakeRunning("ns/a").Queue("research").Obj(),
				MakeRunning("ns/b").Queue("research").Obj())
			res, err := SelectVictims(snap.Overlay(), peFirstFit("ns/p", 1, 8), PreemptionRequest{
				Preemptor: Preemptor{ID: "ns/p", Priority: 5}, Running: running, Now: peNow,
				Budgets: budget, History: tc.history,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.wantOutcome {
				t.Fatalf("outcome %s, want %s (skipped %+v)", res.Outcome, tc.wantOutcome, res.Skipped)
			}
			if tc.wantOutcome == PreemptNoCandidates && peCodes(res.Skipped)["ns/a"] != SkipBudget {
				t.Errorf("skipped = %+v, want DisruptionBudget", res.Skipped)
			}
		})
	}
}

// A preemptor that needs two nodes preempts the whole two-pod gang (never part of it)
// rather than the single-node gangs of higher priority.
func TestSelectVictimsTakesWholeGangs(t *testing.T) {
	snap, running := peBind(t, peNodes(t, 3, 8), []peGang{
		{run: MakeRunning("ns/pair").Priority(1).Obj(), perPod: 8, nodes: []string{"n00", "n01"}},
		{run: MakeRunning("ns/single").Priority(2).Obj(), perPod: 8, nodes: []string{"n02"}},
	})
	res, err := SelectVictims(snap.Overlay(), peFirstFit("ns/p", 1, 8),
		PreemptionRequest{Preemptor: Preemptor{ID: "ns/p", Priority: 5}, Running: running, Now: peNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PreemptFound || len(res.Victims) != 1 || res.Victims[0].Workload != "ns/pair" {
		t.Fatalf("victims %+v, want the whole ns/pair", res.Victims)
	}
	if fmt.Sprint(res.Victims[0].Nodes) != "[n00 n01]" || res.FreedGPUMilli != 16000 {
		t.Errorf("victim frees %v / %d milli, want both nodes / 16000", res.Victims[0].Nodes, res.FreedGPUMilli)
	}
}

func TestSelectVictimsBadInput(t *testing.T) {
	snap, running := peFullCluster(t, MakeRunning("ns/a").Obj())
	dup := append(append([]Running(nil), running...), running[0])
	cases := []struct {
		name string
		ov   *cluster.Overlay
		fit  GangFit
		req  PreemptionRequest
		// want: a substring of the error.
		want string
	}{
		{"nil overlay", nil, peFirstFit("ns/p", 1, 8), PreemptionRequest{}, "overlay"},
		{"nil fit", snap.Overlay(), nil, PreemptionRequest{}, "fit"},
		{"duplicate running", snap.Overlay(), peFirstFit("ns/p", 1, 8), PreemptionRequest{Running: dup}, "ns/a: id: listed twice"},
		{"negative grace", snap.Overlay(), peFirstFit("ns/p", 1, 8), PreemptionRequest{GracePeriod: -time.Second}, "gracePeriod"},
		{"negative budget", snap.Overlay(), peFirstFit("ns/p", 1, 8), PreemptionRequest{
			Budgets: map[string]api.DisruptionBudget{"research": {MaxGPUs: -1}}}, `queue "research": maxGPUs: -1 is negative`},
		{"negative history", snap.Overlay(), peFirstFit("ns/p", 1, 8), PreemptionRequest{
			History: []PreemptionRecord{{Workload: "ns/old", GPUMilli: -5}}}, "history #0 (ns/old): gpuMilli"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SelectVictims(tc.ov, tc.fit, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// A running workload whose pods are not in the snapshot is skipped with a reason, not
// an error and not a victim.
func TestSelectVictimsUnknownPodsAreSkipped(t *testing.T) {
	snap, running := peFullCluster(t, MakeRunning("ns/a").Obj())
	ghost := MakeRunning("ns/ghost").PodsN(2).Obj()
	res, err := SelectVictims(snap.Overlay(), peFirstFit("ns/p", 1, 8), PreemptionRequest{
		Preemptor: Preemptor{ID: "ns/p", Priority: 5}, Running: append(running, ghost), Now: peNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != PreemptFound || res.Victims[0].Workload != "ns/a" || peCodes(res.Skipped)["ns/ghost"] != SkipNoHelp {
		t.Fatalf("outcome %s victims %+v skipped %+v", res.Outcome, res.Victims, res.Skipped)
	}
}

// Property, on real overlays: victims are whole gangs whose removal (all their pods)
// lets the preemptor fit; when removing every eligible gang does not, no victim is
// chosen; the overlay is never changed.
func TestSelectVictimsOverlayProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 5).Draw(rt, "nodes")
		var gangs []peGang
		used := make([]int, nodes)
		for g := 0; g < rapid.IntRange(0, 8).Draw(rt, "gangs"); g++ {
			per := rapid.IntRange(1, 4).Draw(rt, "per")
			var on []string
			for p := 0; p < rapid.IntRange(1, 3).Draw(rt, "pods"); p++ {
				n := rapid.IntRange(0, nodes-1).Draw(rt, "node")
				if used[n]+per <= 8 {
					used[n] += per
					on = append(on, fmt.Sprintf("n%02d", n))
				}
			}
			if len(on) == 0 {
				continue
			}
			r := MakeRunning(fmt.Sprintf("ns/g%d", g)).Priority(int32(rapid.IntRange(0, 3).Draw(rt, "prio")))
			gangs = append(gangs, peGang{run: r.Obj(), perPod: per, nodes: on})
		}
		snap, running := peBind(t, peNodes(t, nodes, 8), gangs)
		ov := snap.Overlay()
		pods, per := rapid.IntRange(1, 3).Draw(rt, "ppods"), rapid.IntRange(1, 8).Draw(rt, "pper")
		fit := peFirstFit("ns/p", pods, per)
		req := PreemptionRequest{Preemptor: Preemptor{ID: "ns/p", Priority: 2}, Running: running, Now: peNow}
		res, err := SelectVictims(ov, fit, req)
		if err != nil {
			rt.Fatal(err)
		}
		if len(ov.Changes()) != 0 {
			rt.Fatalf("overlay changed")
		}
		byID := map[api.WorkloadID]Running{}
		for _, r := range running {
			byID[r.ID] = r
		}
		forget := func(rs []Running) {
			for _, r := range rs {
				for _, p := range r.Pods {
					if err := ov.Forget(p); err != nil {
						rt.Fatal(err)
					}
				}
			}
		}
		var victims, lower []Running
		for _, v := range res.Victims {
			victims = append(victims, byID[v.Workload])
		}
		for _, r := range running {
			if r.Priority < 2 {
				lower = append(lower, r)
			}
		}
		forget(lower)
		_, allHelp := fit(ov)
		ov.Undo(0)
		switch res.Outcome {
		case PreemptFound:
			forget(victims)
			if _, ok := fit(ov); !ok {
				rt.Fatalf("preemptor does not fit after removing whole gangs %v", res.Victims)
			}
			ov.Undo(0)
		case PreemptStillNoFit, PreemptNoCandidates:
			if len(res.Victims) != 0 {
				rt.Fatalf("victims with outcome %s", res.Outcome)
			}
			if allHelp && len(lower) > 0 {
				rt.Fatalf("%s although removing all lower-priority gangs fits", res.Outcome)
			}
		}
	})
}
