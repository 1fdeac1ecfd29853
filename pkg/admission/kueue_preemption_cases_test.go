package admission

import (
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// kueuePreemptionCQs are the defaultClusterQueues of Kueue's TestPreemption. Kueue's
// Resource(name, nominal, borrowingLimit, lendingLimit) becomes Resource, Borrow, Lend.
func kueuePreemptionCQs() []api.ClusterQueue {
	lower, never, anyP := api.PreemptLowerPriority, api.PreemptNever, api.PreemptAny
	zero := int32(0)
	cpuMem := func(borrowCPU, borrowMem string) api.FlavorQuotas {
		fq := gt.MakeFlavorQuotas("default").Resource(cpu, "6")
		if borrowCPU != "" {
			fq.Borrow(borrowCPU)
		}
		fq.Resource(mem, "3Gi")
		if borrowMem != "" {
			fq.Borrow(borrowMem)
		}
		return fq.Obj()
	}
	cpuOnly := func(nominal, borrow string) api.FlavorQuotas {
		return gt.MakeFlavorQuotas("default").Resource(cpu, nominal).Borrow(borrow).Obj()
	}
	shared := func(name, nominal string, within, reclaim api.PreemptionPolicy) api.ClusterQueue {
		return gt.MakeClusterQueue(name).Cohort("with_shared_cq").ResourceGroup(cpuOnly(nominal, "12")).
			Preemption(within, reclaim).BorrowWithinCohort(lower, &zero).Obj()
	}
	bBestEffort := gt.MakeClusterQueue("b_best_effort").Cohort("with_shared_cq").ResourceGroup(cpuOnly("0", "13")).
		Preemption(never, lower).BorrowWithinCohort(lower, &zero).Obj()
	three := func(name string) *gt.ClusterQueueWrapper {
		return gt.MakeClusterQueue(name).Cohort("cohort-three").ResourceGroup(
			gt.MakeFlavorQuotas("default").Resource(cpu, "2").Resource(mem, "2").Obj())
	}
	return []api.ClusterQueue{
		gt.MakeClusterQueue("standalone").
			ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "6").Obj()).
			ResourceGroup(gt.MakeFlavorQuotas("alpha").Resource(mem, "3Gi").Obj(), gt.MakeFlavorQuotas("beta").Resource(mem, "3Gi").Obj()).
			Preemption(lower, never).Obj(),
		gt.MakeClusterQueue("c1").Cohort("cohort").ResourceGroup(cpuMem("6", "3Gi")).Preemption(lower, lower).Obj(),
		gt.MakeClusterQueue("c2").Cohort("cohort").ResourceGroup(cpuMem("6", "3Gi")).Preemption(never, anyP).Obj(),
		gt.MakeClusterQueue("d1").Cohort("cohort-no-limits").ResourceGroup(cpuMem("", "")).Preemption(lower, lower).Obj(),
		gt.MakeClusterQueue("d2").Cohort("cohort-no-limits").ResourceGroup(cpuMem("", "")).Preemption(never, anyP).Obj(),
		gt.MakeClusterQueue("l1").Cohort("legion").ResourceGroup(cpuMem("12", "6Gi")).Preemption(lower, lower).Obj(),
		gt.MakeClusterQueue("preventStarvation").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "6").Obj()).
			Preemption(api.PreemptLowerOrNewerEqualPriority, never).Obj(),
		shared("a_standard", "1", never, lower),
		shared("b_standard", "1", lower, anyP),
		shared("a_best_effort", "1", never, lower),
		bBestEffort,
		gt.MakeClusterQueue("shared").Cohort("with_shared_cq").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "10").Obj()).Obj(),
		gt.MakeClusterQueue("lend1").Cohort("cohort-lend").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "6").Lend("4").Obj()).
			Preemption(lower, lower).Obj(),
		gt.MakeClusterQueue("lend2").Cohort("cohort-lend").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "6").Lend("2").Obj()).
			Preemption(lower, lower).Obj(),
		three("a").Preemption(lower, anyP).Obj(),
		three("b").Obj(),
		three("c").Obj(),
	}
}

// kueuePreemptionCase is one case of Kueue's TestPreemption: the admitted workloads, the
// incoming one and the workloads Kueue preempts for it (none: it waits).
type kueuePreemptionCase struct {
	name     string // the Kueue case name, verbatim
	cqs      []api.ClusterQueue
	cohorts  []api.Cohort
	admitted []kueueAdmitted
	incoming *gt.WorkloadWrapper
	cq       string
	// without lists flavors that Kueue's hand-written assignment does not pick, so
	// Gantry's own flavor assignment is held to the same flavor.
	without map[string]bool
	want    map[string]VictimReason
	// fits: the workload fits by borrowing and nothing is preempted. Kueue's case hands
	// its preemptor an assignment written as Preempt; Kueue's flavor assigner, like
	// Gantry's, would find room in the cohort, so Kueue admits it as well.
	fits bool
	// code overrides the expected FindVictims code (see wantCode).
	code ReasonCode
	// differs, when set, says in one line why Gantry deliberately decides otherwise
	// (listed in docs/admission.md); gantry is then what Gantry preempts instead.
	differs string
	gantry  map[string]VictimReason
	// flavors replace Kueue's default, alpha and beta when set.
	flavors []api.ResourceFlavor
}

// wantCode is WaitingForPreemption when Kueue preempts, none when the workload fits
// and WaitingForQuota when it waits, unless the case says otherwise.
func (tc kueuePreemptionCase) wantCode() ReasonCode {
	switch {
	case tc.code != ReasonNone:
		return tc.code
	case tc.fits:
		return ReasonNone
	case len(tc.want) > 0:
		return WaitingForPreemption
	}
	return WaitingForQuota
}

func TestKueuePreemptionCases(t *testing.T) {
	for _, tc := range kueuePreemptionCases() {
		t.Run(tc.name, func(t *testing.T) { runKueuePreemptionCase(t, tc, Options{}) })
	}
}

// runKueuePreemptionCase builds the case's quota tree with opts, admits its workloads,
// rates the incoming one and checks the victims FindVictims chooses.
func runKueuePreemptionCase(t *testing.T, tc kueuePreemptionCase, opts Options) {
	t.Helper()
	flavors := tc.flavors
	if flavors == nil {
		flavors = kueueFlavors()
	}
	objs := gt.MakeObjects().Flavors(flavors...).ClusterQueues(tc.cqsOrDefault()...).Cohorts(tc.cohorts...).Obj()
	q, err := NewQuota(objs, opts)
	if err != nil {
		t.Fatalf("NewQuota: %v", err)
	}
	admitAll(t, q, tc.admitted)
	wl := tc.incoming.Obj()
	a := q.AssignWithout(wl, tc.cq, tc.without)
	if a.Fits() != tc.fits {
		t.Fatalf("assignment %s (%s): fits %t, want %t", a, a.Why(), a.Fits(), tc.fits)
	}
	res := q.FindVictims(wl, a, nil)
	want, who := tc.want, "Kueue"
	if tc.differs != "" {
		want, who = tc.gantry, "Gantry (differs from Kueue: "+tc.differs+")"
	}
	code := tc.wantCode()
	if tc.differs != "" && tc.code == ReasonNone {
		code = WaitingForQuota
		if len(want) > 0 {
			code = WaitingForPreemption
		}
	}
	if got := victimNames(res); !sameVictims(got, want) || res.Code != code {
		t.Fatalf("assignment %s (%s): victims %v (%s: %s), %s preempts %v (%s)",
			a, a.Why(), sortedNames(got), res.Code, res.Message, who, sortedNames(want), code)
	}
}

func (tc kueuePreemptionCase) cqsOrDefault() []api.ClusterQueue {
	if tc.cqs != nil {
		return tc.cqs
	}
	return kueuePreemptionCQs()
}

// in is Kueue's incoming workload ("in") with priority prio.
func in(prio int32) *gt.WorkloadWrapper { return gt.MakeWorkload("ns-in", "in").Priority(prio) }

func kueuePreemptionCases() []kueuePreemptionCase {
	d := func(q string) FlavorAmount { return use("default", cpu, q) }
	dm := func(q string) FlavorAmount { return use("default", mem, q) }
	inCQ, reclaim, whileBorrowing := InClusterQueue, InCohortReclamation, InCohortReclaimWhileBorrowing
	return []kueuePreemptionCase{
		{
			name:     "preempt lowest priority",
			admitted: []kueueAdmitted{adm("low", "standalone", -1, d("2")), adm("mid", "standalone", 0, d("2")), adm("high", "standalone", 1, d("2"))},
			incoming: in(1).Request(cpu, "2"), cq: "standalone",
			want: map[string]VictimReason{"low": inCQ},
		},
		{
			name:     "preempt multiple",
			admitted: []kueueAdmitted{adm("low", "standalone", -1, d("2")), adm("mid", "standalone", 0, d("2")), adm("high", "standalone", 1, d("2"))},
			incoming: in(1).Request(cpu, "3"), cq: "standalone",
			want: map[string]VictimReason{"low": inCQ, "mid": inCQ},
		},
		{
			name:     "no preemption for low priority",
			admitted: []kueueAdmitted{adm("low", "standalone", -1, d("3")), adm("mid", "standalone", 0, d("3"))},
			incoming: in(-1).Request(cpu, "1"), cq: "standalone",
		},
		{
			name:     "not enough low priority workloads",
			admitted: []kueueAdmitted{adm("low", "standalone", -1, d("3")), adm("mid", "standalone", 0, d("3"))},
			incoming: in(0).Request(cpu, "4"), cq: "standalone",
		},
		{
			name:     "some free quota, preempt low priority",
			admitted: []kueueAdmitted{adm("low", "standalone", -1, d("1")), adm("mid", "standalone", 0, d("1")), adm("high", "standalone", 1, d("3"))},
			incoming: in(1).Request(cpu, "2"), cq: "standalone",
			want: map[string]VictimReason{"low": inCQ},
		},
		{
			name:     "minimal set excludes low priority",
			admitted: []kueueAdmitted{adm("low", "standalone", -1, d("1")), adm("mid", "standalone", 0, d("2")), adm("high", "standalone", 1, d("3"))},
			incoming: in(1).Request(cpu, "2"), cq: "standalone",
			want: map[string]VictimReason{"mid": inCQ},
		},
		{
			name: "only preempt workloads using the chosen flavor",
			admitted: []kueueAdmitted{adm("low", "standalone", -1, use("alpha", mem, "2Gi")),
				adm("mid", "standalone", 0, use("beta", mem, "1Gi")), adm("high", "standalone", 1, use("beta", mem, "1Gi"))},
			incoming: in(1).Request(cpu, "1").Request(mem, "2Gi"), cq: "standalone",
			without: map[string]bool{"alpha": true},
			want:    map[string]VictimReason{"mid": inCQ},
		},
		{
			name:     "reclaim quota from borrower",
			admitted: []kueueAdmitted{adm("c1-low", "c1", -1, d("3")), adm("c2-mid", "c2", 0, d("3")), adm("c2-high", "c2", 1, d("6"))},
			incoming: in(1).Request(cpu, "3"), cq: "c1",
			want: map[string]VictimReason{"c2-mid": reclaim},
		},
		{
			name:     "reclaim quota if workload requests 0 resources for a resource at nominal quota",
			admitted: []kueueAdmitted{adm("c1-low", "c1", -1, d("3"), dm("3Gi")), adm("c2-mid", "c2", 0, d("3")), adm("c2-high", "c2", 1, d("6"))},
			incoming: in(1).Request(cpu, "3").Request(mem, "0"), cq: "c1",
			want: map[string]VictimReason{"c2-mid": reclaim},
		},
		{
			name:     "no workloads borrowing",
			admitted: []kueueAdmitted{adm("c1-high", "c1", 1, d("4")), adm("c2-low-1", "c2", -1, d("4"))},
			incoming: in(1).Request(cpu, "4"), cq: "c1", fits: true,
		},
		{
			name:     "not enough workloads borrowing",
			admitted: []kueueAdmitted{adm("c1-high", "c1", 1, d("4")), adm("c2-low-1", "c2", -1, d("4")), adm("c2-low-2", "c2", -1, d("4"))},
			incoming: in(1).Request(cpu, "4"), cq: "c1",
		},
		{
			name:     "preempting locally and borrowing other resources in cohort, without cohort candidates",
			admitted: []kueueAdmitted{adm("c1-low", "c1", -1, d("4")), adm("c2-low-1", "c2", -1, d("4")), adm("c2-high-2", "c2", 1, d("4"))},
			incoming: in(1).Request(cpu, "4").Request(mem, "5Gi"), cq: "c1",
			want: map[string]VictimReason{"c1-low": inCQ},
		},
		{
			name:     "preempting locally and borrowing same resource in cohort",
			admitted: []kueueAdmitted{adm("c1-med", "c1", 0, d("4")), adm("c1-low", "c1", -1, d("4")), adm("c2-low-1", "c2", -1, d("4"))},
			incoming: in(1).Request(cpu, "4"), cq: "c1",
			want: map[string]VictimReason{"c1-low": inCQ},
		},
		{
			name:     "preempting locally and borrowing same resource in cohort; no borrowing limit in the cohort",
			admitted: []kueueAdmitted{adm("d1-med", "d1", 0, d("4")), adm("d1-low", "d1", -1, d("4")), adm("d2-low-1", "d2", -1, d("4"))},
			incoming: in(1).Request(cpu, "4"), cq: "d1",
			want: map[string]VictimReason{"d1-low": inCQ},
		},
		{
			name: "preempting locally and borrowing other resources in cohort, with cohort candidates",
			admitted: []kueueAdmitted{adm("c1-med", "c1", 0, d("4")), adm("c2-low-1", "c2", -1, d("5")),
				adm("c2-low-2", "c2", -1, d("1")), adm("c2-low-3", "c2", -1, d("1"))},
			incoming: in(1).Request(cpu, "2").Request(mem, "5Gi"), cq: "c1",
			want: map[string]VictimReason{"c1-med": inCQ},
		},
		{
			name:     "preempting locally and not borrowing same resource in 1-queue cohort",
			admitted: []kueueAdmitted{adm("l1-med", "l1", 0, d("4")), adm("l1-low", "l1", -1, d("2"))},
			incoming: in(1).Request(cpu, "4"), cq: "l1",
			want: map[string]VictimReason{"l1-med": inCQ},
		},
		{
			name:     "do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority",
			admitted: []kueueAdmitted{adm("c1", "c1", 0, d("2")), adm("c2-1", "c2", 0, d("4")), adm("c2-2", "c2", 0, d("4"))},
			incoming: in(0).Request(cpu, "4"), cq: "c1",
		},
		{
			name:     "reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny",
			admitted: []kueueAdmitted{adm("c1-1", "c1", 0, d("4")), adm("c1-2", "c1", 1, d("4")), adm("c2", "c2", 0, d("2"))},
			incoming: in(0).Request(cpu, "4"), cq: "c2",
			want: map[string]VictimReason{"c1-1": reclaim},
		},
		{
			name: "preempt from all ClusterQueues in cohort",
			admitted: []kueueAdmitted{adm("c1-low", "c1", -1, d("3")), adm("c1-mid", "c1", 0, d("2")),
				adm("c2-low", "c2", -1, d("3")), adm("c2-mid", "c2", 0, d("4"))},
			incoming: in(0).Request(cpu, "4"), cq: "c1",
			want: map[string]VictimReason{"c1-low": inCQ, "c2-low": reclaim},
		},
		{
			name:     "can't preempt workloads in ClusterQueue for withinClusterQueue=Never",
			admitted: []kueueAdmitted{adm("c2-low", "c2", -1, d("3"))},
			incoming: in(1).Request(cpu, "4"), cq: "c2", fits: true,
		},
		{
			name: "each podset preempts a different flavor",
			admitted: []kueueAdmitted{adm("low-alpha", "standalone", -1, use("alpha", mem, "2Gi")),
				adm("low-beta", "standalone", -1, use("beta", mem, "2Gi"))},
			incoming: in(0).PodSet("launcher", 1).Request(mem, "2Gi").PodSet("workers", 2).Request(mem, "1Gi"), cq: "standalone",
			want: map[string]VictimReason{"low-alpha": inCQ, "low-beta": inCQ},
		},
		{
			// wl3 is admitted before wl2: Kueue's wl2 reserved quota a second later.
			name: "preempt newer workloads with the same priority",
			admitted: []kueueAdmitted{adm("wl1", "preventStarvation", 2, d("2")), adm("wl3", "preventStarvation", 1, d("2")),
				adm("wl2", "preventStarvation", 1, d("2"))},
			incoming: in(1).Created(-15*time.Second).Request(cpu, "2"), cq: "preventStarvation",
			want: map[string]VictimReason{"wl2": inCQ},
		},
		{
			name:     "use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue while borrowing",
			admitted: []kueueAdmitted{adm("a_best_effort_low", "a_best_effort", -1, d("10")), adm("b_best_effort_low", "b_best_effort", -1, d("1"))},
			incoming: in(0).Request(cpu, "10"), cq: "a_standard",
			want: map[string]VictimReason{"a_best_effort_low": whileBorrowing},
		},
		{
			name:     "use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above MaxPriorityThreshold, if borrowing is required even after the preemption",
			admitted: []kueueAdmitted{adm("b_standard", "b_standard", 1, d("10"))},
			incoming: in(2).Request(cpu, "10"), cq: "a_standard",
		},
		{
			name:     "use BorrowWithinCohort; allow preempting a lower-priority workload with priority above MaxPriorityThreshold, if borrowing is not required after the preemption",
			admitted: []kueueAdmitted{adm("b_standard", "b_standard", 1, d("13"))},
			incoming: in(2).Request(cpu, "1"), cq: "a_standard",
			want: map[string]VictimReason{"b_standard": reclaim},
		},
		{
			name:     "use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the same ClusterQueue",
			admitted: []kueueAdmitted{adm("a_standard", "a_standard", 1, d("13"))},
			incoming: in(2).Request(cpu, "1"), cq: "a_standard",
		},
		{
			name: "use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and already above nominal",
			admitted: []kueueAdmitted{adm("a_standard_1", "a_standard", 1, d("10")), adm("a_standard_2", "a_standard", 1, d("1")),
				adm("b_standard_1", "b_standard", 1, d("1")), adm("b_standard_2", "b_standard", 2, d("1"))},
			incoming: in(3).Request(cpu, "1"), cq: "b_standard",
			want: map[string]VictimReason{"b_standard_1": inCQ},
		},
		{
			name: "use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold",
			admitted: []kueueAdmitted{adm("b_standard_high", "b_standard", 2, d("10")), adm("b_standard_mid", "b_standard", 1, d("1")),
				adm("a_best_effort_low", "a_best_effort", -1, d("1")), adm("a_best_effort_lower", "a_best_effort", -2, d("1"))},
			incoming: in(2).Request(cpu, "2"), cq: "b_standard",
			want: map[string]VictimReason{"a_best_effort_lower": whileBorrowing, "b_standard_mid": inCQ},
		},
		{
			name:     "reclaim quota from lender",
			admitted: []kueueAdmitted{adm("lend1-low", "lend1", -1, d("3")), adm("lend2-mid", "lend2", 0, d("3")), adm("lend2-high", "lend2", 1, d("4"))},
			incoming: in(1).Request(cpu, "3"), cq: "lend1",
			want: map[string]VictimReason{"lend2-mid": reclaim},
		},
		{
			name: "preempt from all ClusterQueues in cohort-lend",
			admitted: []kueueAdmitted{adm("lend1-low", "lend1", -1, d("3")), adm("lend1-mid", "lend1", 0, d("2")),
				adm("lend2-low", "lend2", -1, d("3")), adm("lend2-mid", "lend2", 0, d("4"))},
			incoming: in(0).Request(cpu, "4"), cq: "lend1",
			want: map[string]VictimReason{"lend1-low": inCQ, "lend2-low": reclaim},
		},
		{
			name: "cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit",
			// Kueue's flavor assigner also rates this NoFit: 9 is more than lend1's 6
			// plus the 2 that lend2 lends.
			admitted: []kueueAdmitted{adm("lend2-low", "lend2", -1, d("10"))},
			incoming: in(0).Request(cpu, "9"), cq: "lend1", code: ExceedsMaxQuota,
		},
		{
			name: "preemptions from cq when target queue is exhausted for the single requested resource",
			admitted: []kueueAdmitted{adm("a1", "a", -2, d("1")), adm("a2", "a", -2, d("1")), adm("a3", "a", -1, d("1")),
				adm("b1", "b", 0, d("1")), adm("b2", "b", 0, d("1")), adm("b3", "b", 0, d("1"))},
			incoming: in(0).Request(cpu, "2"), cq: "a",
			want: map[string]VictimReason{"a1": inCQ, "a2": inCQ},
		},
		{
			name: "preemptions from cq when target queue is exhausted for two requested resources",
			admitted: []kueueAdmitted{adm("a1", "a", -2, d("1"), dm("1")), adm("a2", "a", -2, d("1"), dm("1")), adm("a3", "a", -1, d("1"), dm("1")),
				adm("b1", "b", 0, d("1"), dm("1")), adm("b2", "b", 0, d("1"), dm("1")), adm("b3", "b", 0, d("1"), dm("1"))},
			incoming: in(0).Request(cpu, "2").Request(mem, "2"), cq: "a",
			want: map[string]VictimReason{"a1": inCQ, "a2": inCQ},
		},
		{
			name: "preemptions from cq when target queue is exhausted for one requested resource, but not the other",
			admitted: []kueueAdmitted{adm("a1", "a", -2, d("1")), adm("a2", "a", -2, d("1")), adm("a3", "a", -1, d("1")),
				adm("b1", "b", 0, d("1")), adm("b2", "b", 0, d("1")), adm("b3", "b", 0, d("1"))},
			incoming: in(0).Request(cpu, "2").Request(mem, "2"), cq: "a",
			want: map[string]VictimReason{"a1": inCQ, "a2": inCQ},
		},
		{
			name: "allow preemption from other cluster queues if target cq is not exhausted for the requested resource",
			admitted: []kueueAdmitted{adm("a1", "a", -1, d("1")), adm("b1", "b", 0, d("1")), adm("b2", "b", 0, d("1")),
				adm("b3", "b", 0, d("1")), adm("b4", "b", 0, d("1")), adm("b5", "b", -1, d("1"))},
			incoming: in(0).Request(cpu, "2"), cq: "a",
			want: map[string]VictimReason{"a1": inCQ, "b5": reclaim},
		},
		{
			name: "long range preemption",
			cqs: []api.ClusterQueue{
				gt.MakeClusterQueue("cq-left").Cohort("cohort-left").Preemption(api.PreemptNever, api.PreemptAny).
					ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "10").Obj()).Obj(),
				gt.MakeClusterQueue("cq-right").Cohort("cohort-right").
					ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "0").Obj()).Obj(),
			},
			cohorts:  []api.Cohort{gt.MakeCohort("cohort-left").Parent("root").Obj(), gt.MakeCohort("cohort-right").Parent("root").Obj()},
			admitted: []kueueAdmitted{adm("to-be-preempted", "cq-right", 0, d("5"))},
			incoming: in(0).Request(cpu, "8"), cq: "cq-left",
			want: map[string]VictimReason{"to-be-preempted": reclaim},
		},
	}
}
