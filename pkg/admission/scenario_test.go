package admission

import (
	"strings"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Scenario tests for the behaviours Kueue's documentation describes.

func TestBorrowUpToLimitThenReclaim(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("c").Preemption(api.PreemptNever, api.PreemptAny).
			ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Borrow("4").Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("c").Preemption(api.PreemptNever, api.PreemptAny).
			ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj()).Obj(),
	).Obj()
	m := newAdmitter(t, objs, Options{})
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "a1").Created(time.Second).Request(gpu, "4").Obj(), Fit)
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "a2").Created(2*time.Second).Request(gpu, "4").Obj(), Fit)
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "a3").Created(3*time.Second).Request(gpu, "4").Obj(), Borrow)
	if got := m.Quota.Borrowed("a", "h100", gpu); got != 4 {
		t.Fatalf("a borrows %d, want 4", got)
	}

	// The borrowing limit caps a at 12 even though b has 8 unused; nothing to preempt.
	a4 := gt.MakeWorkload("ns-a", "a4").Created(4*time.Second).Request(gpu, "4").Obj()
	got := m.assign(a4)
	if got.Mode != Preempt || !strings.Contains(got.PodSets[0].Tried[0].Reasons[0].String(), "borrowing limit 4 reached") {
		t.Fatalf("a4: mode %s, reasons %v; want Preempt with the borrowing limit explained", got.Mode, got.PodSets[0].Tried)
	}
	if res := m.FindVictims(a4, got, nil); res.Code != WaitingForQuota || len(res.Victims) != 0 {
		t.Fatalf("a4 victims %v code %s, want none and WaitingForQuota", victimIDs(res), res.Code)
	}

	// b needs its quota back: it reclaims the most recently admitted borrower, a3, only.
	b1 := gt.MakeWorkload("ns-b", "b1").Created(5*time.Second).Request(gpu, "8").Obj()
	ab := m.assign(b1)
	if ab.Mode != Preempt {
		t.Fatalf("b1: mode %s, want Preempt", ab.Mode)
	}
	res := m.FindVictims(b1, ab, nil)
	if want := []api.WorkloadID{"ns-a/a3"}; !sameIDs(victimIDs(res), want) || res.Code != WaitingForPreemption {
		t.Fatalf("b1 victims %v (%s), want %v", victimIDs(res), res.Code, want)
	}
	if res.Victims[0].Reason != InCohortReclamation {
		t.Fatalf("victim reason %s, want %s", res.Victims[0].Reason, InCohortReclamation)
	}
	if err := m.Release("ns-a/a3"); err != nil {
		t.Fatal(err)
	}
	mustAdmit(t, m, b1, Fit)
}

func TestLendingLimitKeepsQuotaPrivate(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Lend("2").Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "4").Obj()).Obj(),
	).Obj()
	m := newAdmitter(t, objs, Options{})
	// b can reach its 4 plus the 2 a lends, never more.
	if a := m.assign(gt.MakeWorkload("ns-b", "big").Request(gpu, "7").Obj()); a.Mode != NoFit || a.Code != ExceedsMaxQuota {
		t.Fatalf("7 GPUs in b: %s/%s, want NoFit/ExceedsMaxQuota", a.Mode, a.Code)
	}
	mustAdmit(t, m, gt.MakeWorkload("ns-b", "b1").Request(gpu, "6").Obj(), Borrow)
	// a's 6 private GPUs stay free for it although b borrows all it can.
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "a1").Request(gpu, "6").Obj(), Fit)
	if got := m.Quota.Available("a", "h100", gpu); got != 0 {
		t.Fatalf("a available %d, want 0 (its lent 2 are in use by b)", got)
	}
}

// A workload that does not fit waits for quota while a smaller one fits beside it, and
// fits once capacity is freed. Whether the smaller one may go first (BestEffortFIFO) or
// waits behind it (StrictFIFO) is the engine's queueing (its TestCycleOutcomes).
func TestWaitingForQuotaUntilRelease(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(gpuCQ("a").Obj()).Obj()
	m := newAdmitter(t, objs, Options{})
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "running").Request(gpu, "6").Obj(), Fit)
	big := gt.MakeWorkload("ns-a", "big").Created(time.Second).Request(gpu, "4").Obj()
	small := gt.MakeWorkload("ns-a", "small").Created(2*time.Second).Request(gpu, "2").Obj()
	if a := m.assign(big); a.Mode != NoFit || a.Code != WaitingForQuota {
		t.Fatalf("big: %s/%s, want NoFit/WaitingForQuota", a.Mode, a.Code)
	}
	if a := m.assign(small); a.Mode != Fit {
		t.Fatalf("small: %s (%s), want Fit beside the running workload", a.Mode, a.Message)
	}
	// Capacity freed: big fits.
	if err := m.Release("ns-a/running"); err != nil {
		t.Fatal(err)
	}
	if a := m.assign(big); a.Mode != Fit {
		t.Fatalf("big after release: %s (%s), want Fit", a.Mode, a.Message)
	}
}

func TestFlavorFallbackH100ToA100(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj(), gt.MakeFlavor("a100").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").ResourceGroup(
			gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj(),
			gt.MakeFlavorQuotas("a100").Resource(gpu, "8").Obj()).Obj(),
	).Obj()
	m := newAdmitter(t, objs, Options{})
	a := mustAdmit(t, m, gt.MakeWorkload("ns-a", "w1").Request(gpu, "6").Obj(), Fit)
	if f := a.PodSets[0].Flavor(gpu); f != "h100" {
		t.Fatalf("w1 flavor %s, want h100", f)
	}
	a = mustAdmit(t, m, gt.MakeWorkload("ns-a", "w2").Request(gpu, "4").Obj(), Fit)
	if f := a.PodSets[0].Flavor(gpu); f != "a100" {
		t.Fatalf("w2 flavor %s, want a100", f)
	}
	tried := a.PodSets[0].Tried
	if len(tried) != 2 || tried[0].Flavor != "h100" || tried[0].Mode != NoFit ||
		tried[0].Reasons[0].String() != "needs 4 nvidia.com/gpu in flavor h100, 2 free of nominal 8, cannot borrow: not in a cohort" {
		t.Fatalf("tried %+v: want h100 rejected with its reason, then a100", tried)
	}
}

func TestWhenCanBorrow(t *testing.T) {
	tests := []struct {
		name       string
		policy     api.FungibilityPolicy
		wantFlavor string
		wantMode   Mode
	}{
		{"MayStopSearch borrows in the first flavor", api.MayStopSearch, "h100", Borrow},
		{"TryNextFlavor picks the flavor that fits without borrowing", api.TryNextFlavor, "a100", Fit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj(), gt.MakeFlavor("a100").Obj()).ClusterQueues(
				gt.MakeClusterQueue("a").Cohort("c").Fungibility(tt.policy, api.TryNextFlavor).ResourceGroup(
					gt.MakeFlavorQuotas("h100").Resource(gpu, "2").Obj(),
					gt.MakeFlavorQuotas("a100").Resource(gpu, "8").Obj()).Obj(),
				gt.MakeClusterQueue("b").Cohort("c").ResourceGroup(
					gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj(),
					gt.MakeFlavorQuotas("a100").Resource(gpu, "0").Obj()).Obj(),
			).Obj()
			m := newAdmitter(t, objs, Options{})
			a := m.assign(gt.MakeWorkload("ns-a", "w").Request(gpu, "4").Obj())
			if a.Mode != tt.wantMode || a.PodSets[0].Flavor(gpu) != tt.wantFlavor {
				t.Fatalf("got %s in %s, want %s in %s", a.Mode, a.PodSets[0].Flavor(gpu), tt.wantMode, tt.wantFlavor)
			}
			if tt.wantMode == Borrow && (len(a.Borrowed) != 1 || a.Borrowed[0].Amount != 2) {
				t.Fatalf("borrowed %v, want 2 h100 GPUs", a.Borrowed)
			}
		})
	}
}

func TestPreemptionWithinClusterQueue(t *testing.T) {
	tests := []struct {
		name   string
		policy api.PreemptionPolicy
		// preemptor's priority and creation second; admitted low/mid/same are below.
		priority int32
		created  int
		// want are the victims, in the order chosen.
		want []api.WorkloadID
	}{
		{"LowerPriority takes the newest of the lowest", api.PreemptLowerPriority, 5, 0, []api.WorkloadID{"ns-a/low2"}},
		{"LowerPriority spares equal priority", api.PreemptLowerPriority, 1, 0, nil},
		{"Never preempts nothing", api.PreemptNever, 9, 0, nil},
		{"LowerOrNewerEqualPriority takes a newer equal", api.PreemptLowerOrNewerEqualPriority, 1, 0, []api.WorkloadID{"ns-a/low2"}},
		{"LowerOrNewerEqualPriority spares an older equal", api.PreemptLowerOrNewerEqualPriority, 1, 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
				gt.MakeClusterQueue("a").Preemption(tt.policy, api.PreemptNever).
					ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj()).Obj(),
			).Obj()
			m := newAdmitter(t, objs, Options{})
			mustAdmit(t, m, gt.MakeWorkload("ns-a", "low1").Priority(1).Created(10*time.Second).Request(gpu, "4").Obj(), Fit)
			mustAdmit(t, m, gt.MakeWorkload("ns-a", "low2").Priority(1).Created(20*time.Second).Request(gpu, "4").Obj(), Fit)
			p := gt.MakeWorkload("ns-a", "p").Priority(tt.priority).Created(time.Duration(tt.created)*time.Second).Request(gpu, "4").Obj()
			a := m.assign(p)
			if tt.policy == api.PreemptNever {
				if a.Mode != NoFit || a.Code != WaitingForQuota {
					t.Fatalf("mode %s/%s, want NoFit/WaitingForQuota when preemption is off", a.Mode, a.Code)
				}
				return
			}
			res := m.FindVictims(p, a, nil)
			if !sameIDs(victimIDs(res), tt.want) {
				t.Fatalf("victims %v, want %v (%s)", victimIDs(res), tt.want, res.Message)
			}
		})
	}
}

func TestReclaimRespectsPriorityAndProtection(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "0").Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("c").Preemption(api.PreemptNever, api.PreemptLowerPriority).
			ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "8").Obj()).Obj(),
	).Obj()
	m := newAdmitter(t, objs, Options{})
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "hi").Priority(9).Request(gpu, "4").Obj(), Borrow)
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "lo").Priority(0).Request(gpu, "4").Obj(), Borrow)
	p := gt.MakeWorkload("ns-b", "p").Priority(5).Request(gpu, "4").Obj()
	a := m.assign(p)
	if res := m.FindVictims(p, a, nil); !sameIDs(victimIDs(res), []api.WorkloadID{"ns-a/lo"}) {
		t.Fatalf("victims %v, want only the lower-priority borrower", victimIDs(res))
	}
	protected := func(id api.WorkloadID) bool { return id == "ns-a/lo" }
	if res := m.FindVictims(p, a, protected); len(res.Victims) != 0 || res.Code != WaitingForQuota {
		t.Fatalf("with lo protected: victims %v code %s, want none", victimIDs(res), res.Code)
	}
}

func TestFairShareOrderingByWeight(t *testing.T) {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
		gt.MakeClusterQueue("lender").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "12").Obj()).Obj(),
		gt.MakeClusterQueue("a").Cohort("c").Weight(1000).ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "0").Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("c").Weight(3000).ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "0").Obj()).Obj(),
	).Obj()
	m := newAdmitter(t, objs, Options{FairSharing: FairSharingConfig{Enabled: true}})
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "a1").Request(gpu, "3").Obj(), Borrow)
	mustAdmit(t, m, gt.MakeWorkload("ns-b", "b1").Request(gpu, "3").Obj(), Borrow)
	// Both borrow 3 of 12: share 250 for a (weight 1) and 83 for b (weight 3).
	if sa, sb := m.Quota.Share("a"), m.Quota.Share("b"); sa != 250 || sb != 83 {
		t.Fatalf("shares a=%d b=%d, want 250 and 83", sa, sb)
	}
	// The engine orders pending workloads of equal priority by these shares (its
	// TestCycleDeterministic).
}

func TestHierarchicalCohortLendsAcrossSubtrees(t *testing.T) {
	tests := []struct {
		name string
		// teamALend is teamA's lending limit to org ("" = none).
		teamALend string
		// wantMax is the most b1 may ever use.
		wantMax resources.Amount
	}{
		{"unused quota of a sibling sub-tree is borrowed", "", 12},
		{"a sub-cohort's lending limit caps it", "2", 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			teamA := gt.MakeCohort("teamA").Parent("org")
			if tt.teamALend != "" {
				teamA.ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "0").Lend(tt.teamALend).Obj())
			}
			objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).
				Cohorts(teamA.Obj(), gt.MakeCohort("teamB").Parent("org").Obj()).
				ClusterQueues(
					gt.MakeClusterQueue("a1").Cohort("teamA").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "4").Obj()).Obj(),
					gt.MakeClusterQueue("a2").Cohort("teamA").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "4").Obj()).Obj(),
					gt.MakeClusterQueue("b1").Cohort("teamB").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "4").Obj()).Obj(),
				).Obj()
			m := newAdmitter(t, objs, Options{})
			over := gt.MakeWorkload("ns-b1", "over").Request(gpu, "1").Obj()
			over.PodSets[0].Count = int32(tt.wantMax) + 1
			if a := m.assign(over); a.Code != ExceedsMaxQuota {
				t.Fatalf("%d GPUs: %s/%s, want ExceedsMaxQuota", tt.wantMax+1, a.Mode, a.Code)
			}
			w := gt.MakeWorkload("ns-b1", "w").Request(gpu, "1").Obj()
			w.PodSets[0].Count = int32(tt.wantMax)
			mustAdmit(t, m, w, Borrow)
			if got := m.Quota.Borrowed("b1", "h100", gpu); got != tt.wantMax-4 {
				t.Fatalf("b1 borrowed %d, want %d", got, tt.wantMax-4)
			}
			if got := m.Quota.CohortUsage("org", "h100", gpu); got != tt.wantMax {
				t.Fatalf("org usage %d, want %d", got, tt.wantMax)
			}
		})
	}
}

func TestBorrowWithinCohort(t *testing.T) {
	tests := []struct {
		name string
		// sizes of the two prio-0 workloads running in lender queue "l" (nominal 1).
		a, b string
		// need is the prio-1 preemptor's request in "p" (nominal 3); want its victims.
		need string
		want []api.WorkloadID
	}{
		{"takes what the lender borrows", "3", "2", "6", []api.WorkloadID{"ns-l/a"}},
		// Taking both would leave l under its nominal quota, and l (reclaimWithinCohort:
		// Any) would reclaim it from the borrowing preemptor at once.
		{"refuses a set the victim could reclaim back", "2", "1", "8", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			zero := int32(0)
			objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
				gt.MakeClusterQueue("l").Cohort("c").Preemption(api.PreemptNever, api.PreemptAny).
					ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "1").Obj()).Obj(),
				gt.MakeClusterQueue("p").Cohort("c").Preemption(api.PreemptNever, api.PreemptLowerPriority).
					BorrowWithinCohort(api.PreemptLowerPriority, &zero).
					ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "3").Obj()).Obj(),
				gt.MakeClusterQueue("idle").Cohort("c").ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "5").Obj()).Obj(),
			).Obj()
			m := newAdmitter(t, objs, Options{})
			mustAdmit(t, m, gt.MakeWorkload("ns-l", "a").Request(gpu, tt.a).Obj(), Borrow)
			mustAdmit(t, m, gt.MakeWorkload("ns-l", "b").Request(gpu, tt.b).Obj(), Borrow)
			mustAdmit(t, m, gt.MakeWorkload("ns-idle", "i").Request(gpu, "1").Obj(), Fit)
			p := gt.MakeWorkload("ns-p", "p").Priority(1).Request(gpu, tt.need).Obj()
			res := m.FindVictims(p, m.assign(p), nil)
			if !sameIDs(victimIDs(res), tt.want) {
				t.Fatalf("victims %v, want %v (%s)", victimIDs(res), tt.want, res.Message)
			}
			if len(res.Victims) > 0 && res.Victims[0].Reason != InCohortReclaimWhileBorrowing {
				t.Fatalf("reason %s, want %s", res.Victims[0].Reason, InCohortReclaimWhileBorrowing)
			}
		})
	}
}

// TestBorrowWithinCohortCountsInQueuePreemption: the victim's queue could make room for
// it again by preempting a newer workload of its own, and then reclaim its quota from
// the borrowing preemptor, so the victim set is refused.
func TestBorrowWithinCohortCountsInQueuePreemption(t *testing.T) {
	two := int32(2)
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("c").Preemption(api.PreemptLowerOrNewerEqualPriority, api.PreemptAny).
			ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "6").Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("c").Preemption(api.PreemptNever, api.PreemptLowerPriority).
			BorrowWithinCohort(api.PreemptLowerPriority, &two).
			ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(gpu, "1").Obj()).Obj(),
	).Obj()
	m := newAdmitter(t, objs, Options{})
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "newer").Priority(2).Created(time.Second).Request(gpu, "1").Obj(), Fit)
	mustAdmit(t, m, gt.MakeWorkload("ns-a", "older").Priority(2).Created(0*time.Second).Request(gpu, "6").Obj(), Borrow)
	p := gt.MakeWorkload("ns-b", "p").Priority(3).Request(gpu, "2").Obj()
	if res := m.FindVictims(p, m.assign(p), nil); len(res.Victims) != 0 {
		t.Fatalf("victims %v, want none: a/older could take its quota straight back", victimIDs(res))
	}
}
