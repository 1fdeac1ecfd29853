package admission

import (
	"math"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestFairSharingPreemption(t *testing.T) {
	tests := []struct {
		name string
		// weights of the borrower a (holding 3 workloads of 2 GPUs) and the preemptor b.
		weightA, weightB int64
		strategies       []FairStrategy
		// want are the victims of b's 4-GPU workload.
		want []api.WorkloadID
	}{
		{"equal weights: take the newest until shares meet", 1000, 1000, []FairStrategy{LessThanOrEqualToFinalShare}, []api.WorkloadID{"ns-a/a3"}},
		{"heavier borrower keeps its share", 3000, 1000, nil, nil},
		{"LessThanInitialShare alone also allows it", 1000, 1000, []FairStrategy{LessThanInitialShare}, []api.WorkloadID{"ns-a/a3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
				gt.MakeClusterQueue("lender").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj()).Obj(),
				gt.MakeClusterQueue("a").Cohort("c").Weight(tt.weightA).Preemption(api.PreemptNever, api.PreemptAny).
					ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "0").Obj()).Obj(),
				gt.MakeClusterQueue("b").Cohort("c").Weight(tt.weightB).Preemption(api.PreemptNever, api.PreemptAny).
					ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "0").Obj()).Obj(),
			).Obj()
			m := newAdmitter(t, objs, Options{FairSharing: FairSharingConfig{Enabled: true, Strategies: tt.strategies}})
			for i, name := range []string{"a1", "a2", "a3"} {
				mustAdmit(t, m, gt.MakeWorkload("ns-a", name).Created(time.Duration(i)*time.Second).Request(gpu, "2").Obj(), Borrow)
			}
			p := gt.MakeWorkload("ns-b", "p").Request(gpu, "4").Obj()
			a := m.assign(p)
			if a.Mode != Preempt {
				t.Fatalf("mode %s, want Preempt", a.Mode)
			}
			res := m.FindVictims(p, a, nil)
			if !sameIDs(victimIDs(res), tt.want) {
				t.Fatalf("victims %v, want %v (%s)", victimIDs(res), tt.want, res.Message)
			}
			for _, v := range res.Victims {
				if v.Reason != InCohortFairSharing {
					t.Fatalf("victim reason %s, want %s", v.Reason, InCohortFairSharing)
				}
			}
		})
	}
}

// TestFairSharingRefusesUnstableVictimSets is the case the stability check exists for:
// taking both of a's workloads would let the smaller one take the GPUs straight back.
func TestFairSharingRefusesUnstableVictimSets(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("f").Obj()).Cohorts(gt.MakeCohort("root").Obj(),
		gt.MakeCohort("sub").Parent("root").ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "4").Obj()).Obj()).
		ClusterQueues(
			gt.MakeClusterQueue("a").Cohort("root").Preemption(api.PreemptNever, api.PreemptAny).
				ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "0").Obj()).Obj(),
			gt.MakeClusterQueue("b").Cohort("root").Preemption(api.PreemptNever, api.PreemptAny).Weight(2000).
				ResourceGroup(gt.MakeFlavorQuotas("f").Resource(gpu, "3").Obj()).Obj(),
		).Obj()
	m := newAdmitter(t, objs, Options{FairSharing: FairSharingConfig{Enabled: true}})
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "w1").Request(gpu, "3").Obj(), Borrow)
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "w2").Request(gpu, "1").Obj(), Borrow)
	w3 := gt.MakeWorkload("ns-b", "w3").Request(gpu, "7").Obj()
	a := m.assign(w3)
	if res := m.FindVictims(w3, a, nil); len(res.Victims) != 0 || res.Code != WaitingForQuota {
		t.Fatalf("victims %v (%s), want none: w2 could preempt w3 back", victimIDs(res), res.Code)
	}
}

func TestShare(t *testing.T) {
	tests := []struct {
		name   string
		weight int64 // thousandths
		borrow string
		// want is the weighted dominant resource share in thousandths.
		want int64
	}{
		{"not borrowing", 1000, "0", 0},
		{"a quarter of what the cohort lends", 1000, "2", 250},
		{"weight 2 halves it", 2000, "2", 125},
		{"weight 0 borrowing is last in line", 0, "2", math.MaxInt64},
		{"weight 0 not borrowing", 0, "0", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
				gt.MakeClusterQueue("lender").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "4").Obj()).Obj(),
				gt.MakeClusterQueue("a").Cohort("c").Weight(tt.weight).ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "4").Obj()).Obj(),
			).Obj()
			m := newAdmitter(t, objs, Options{})
			n := resources.MustParse(gpu, tt.borrow) + 4
			w := gt.MakeWorkload("ns-a", "w").Request(gpu, "1").Obj()
			w.PodSets[0].Count = int32(n)
			mustAdmit(t, m, w, map[bool]Mode{true: Fit, false: Borrow}[tt.borrow == "0"])
			if got := m.Quota.Share("a"); got != tt.want {
				t.Fatalf("share %d, want %d", got, tt.want)
			}
		})
	}
}
