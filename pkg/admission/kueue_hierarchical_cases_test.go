package admission

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// Cases of Kueue's TestHierarchicalPreemptions
// (pkg/scheduler/preemption/preemption_hierarchical_test.go): preemption in trees of
// Cohorts, where a ClusterQueue may reclaim quota its own subtree lends regardless of
// priority. Quotas are all of cpu in flavor "default". Kueue's ClusterQueues without any
// quota of their own become Gantry ClusterQueues with a nominal quota of 0, which is
// the same quota (Gantry needs the resource listed to cover it).

func TestKueueHierarchicalPreemptionCases(t *testing.T) {
	for _, tc := range kueueHierarchicalCases() {
		t.Run(tc.name, func(t *testing.T) { runKueuePreemptionCase(t, tc, Options{}) })
	}
}

// hq is a ClusterQueue of cohort with nominal cpu in flavor default, preempting
// LowerPriority within the queue and reclaim as given in the cohort tree.
func hq(name, cohort, nominal string, reclaim api.PreemptionPolicy) *gt.ClusterQueueWrapper {
	return gt.MakeClusterQueue(name).Cohort(cohort).Preemption(api.PreemptLowerPriority, reclaim).
		ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, nominal).Obj())
}

// hc is a cohort under parent ("" for a root) with cpu in flavor default ("" for none).
func hc(name, parent, nominal string) api.Cohort {
	c := gt.MakeCohort(name).Parent(parent)
	if nominal != "" {
		c.ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, nominal).Obj())
	}
	return c.Obj()
}

// rc is Kueue's usual two-level tree: root r, and c (cpu nominal) under it.
func rc(nominal string) []api.Cohort { return []api.Cohort{hc("r", "", ""), hc("c", "r", nominal)} }

func kueueHierarchicalCases() []kueuePreemptionCase {
	d := func(q string) FlavorAmount { return use("default", cpu, q) }
	anyP, lower := api.PreemptAny, api.PreemptLowerPriority
	zero := int32(0)
	withBWC := func(w *gt.ClusterQueueWrapper) api.ClusterQueue { return w.BorrowWithinCohort(lower, &zero).Obj() }
	reclaim, inCQ, whileBorrowing := InCohortReclamation, InClusterQueue, InCohortReclaimWhileBorrowing
	return []kueuePreemptionCase{
		{
			name:     "preempt with hierarchical advantage",
			cohorts:  rc("2"),
			cqs:      []api.ClusterQueue{hq("q", "c", "0", anyP).Obj(), hq("q_borrowing", "r", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted2", "q_borrowing", 0, d("2"))},
			incoming: in(0).Request(cpu, "2"), cq: "q",
			want: map[string]VictimReason{"admitted2": reclaim},
		},
		{
			name:    "avoid queues within nominal quota",
			cohorts: rc("2"),
			cqs: []api.ClusterQueue{hq("q_nominal", "r", "2", anyP).Obj(), hq("q", "c", "0", anyP).Obj(),
				hq("q_borrowing", "r", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted1", "q_nominal", -10, d("2")), adm("admitted2", "q_borrowing", 0, d("2"))},
			incoming: in(0).Request(cpu, "2"), cq: "q",
			want: map[string]VictimReason{"admitted2": reclaim},
		},
		{
			name:     "preempt multiple with hierarchical advantage",
			cohorts:  rc("2"),
			cqs:      []api.ClusterQueue{hq("q", "c", "0", anyP).Obj(), hq("q_borrowing", "r", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted1", "q_borrowing", 1, d("1")), adm("admitted2", "q_borrowing", 2, d("1"))},
			incoming: in(0).Request(cpu, "2"), cq: "q",
			want: map[string]VictimReason{"admitted1": reclaim, "admitted2": reclaim},
		},
		{
			name:    "preempt in cohort and own CQ",
			cohorts: rc("3"),
			cqs:     []api.ClusterQueue{withBWC(hq("q", "c", "0", anyP)), hq("q_same_cohort", "c", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_not_preemptible", "q_same_cohort", 1, d("1")),
				adm("admitted_preemptible", "q_same_cohort", 0, d("2")), adm("admitted_own_queue", "q", -1, d("1"))},
			incoming: in(1).Request(cpu, "2"), cq: "q",
			want: map[string]VictimReason{"admitted_own_queue": inCQ, "admitted_preemptible": whileBorrowing},
		},
		{
			name:    "prefer to preempt hierarchical candidate",
			cohorts: rc("2"),
			cqs:     []api.ClusterQueue{hq("q", "c", "0", anyP).Obj(), hq("q_borrowing", "r", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_borrowing", "q_borrowing", 1, d("1")),
				adm("admitted_same_queue", "q", -2, d("1"))},
			incoming: in(0).Request(cpu, "1"), cq: "q",
			want: map[string]VictimReason{"admitted_borrowing": reclaim},
		},
		{
			name:    "forced to preempt priority candidate",
			cohorts: rc("2"),
			cqs: []api.ClusterQueue{withBWC(hq("q", "c", "0", anyP)), hq("q_nominal", "r", "2", anyP).Obj(),
				hq("q_same_cohort", "c", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_nominal", "q_nominal", -10, d("2")),
				adm("admitted_same_cohort", "q_same_cohort", -1, d("2"))},
			incoming: in(0).Request(cpu, "2"), cq: "q",
			want: map[string]VictimReason{"admitted_same_cohort": whileBorrowing},
		},
		{
			name:    "incoming workload fits in CQ nominal quota",
			cohorts: rc("2"),
			cqs: []api.ClusterQueue{hq("q", "c", "4", anyP).Obj(), hq("q_borrowing", "r", "0", anyP).Obj(),
				hq("q_same_cohort", "c", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_borrowing", "q_borrowing", 10, d("3")),
				adm("admitted_same_cohort", "q_same_cohort", 10, d("3"))},
			incoming: in(0).Request(cpu, "4"), cq: "q",
			want: map[string]VictimReason{"admitted_borrowing": reclaim, "admitted_same_cohort": reclaim},
		},
		{
			name:    "preempt hierarchical and priority candidates",
			cohorts: []api.Cohort{hc("r", "", "1"), hc("c", "r", "4")},
			cqs: []api.ClusterQueue{withBWC(hq("q", "c", "0", lower)), hq("q_borrowing", "r", "0", anyP).Obj(),
				hq("q_same_cohort", "c", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_borrowing", "q_borrowing", -1, d("2")),
				adm("admitted_same_cohort_preemptible", "q_same_cohort", -1, d("1")),
				adm("admitted_borrowing_not_preemptible", "q_borrowing", 1, d("2"))},
			incoming: in(0).Request(cpu, "3"), cq: "q",
			want: map[string]VictimReason{"admitted_borrowing": reclaim, "admitted_same_cohort_preemptible": whileBorrowing},
		},
		{
			name:    "preempt hierarchical candidates and inside CQ",
			cohorts: []api.Cohort{hc("r", "", "1"), hc("c", "r", "4")},
			cqs: []api.ClusterQueue{withBWC(hq("q", "c", "0", lower)), hq("q_borrowing", "r", "0", anyP).Obj(),
				hq("q_same_cohort", "c", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_borrowing", "q_borrowing", -1, d("2")),
				adm("admitted_same_queue_preemptible", "q", -1, d("1")),
				adm("admitted_borrowing_not_preemptible", "q_borrowing", 1, d("2"))},
			incoming: in(0).Request(cpu, "3"), cq: "q",
			want: map[string]VictimReason{"admitted_borrowing": reclaim, "admitted_same_queue_preemptible": inCQ},
		},
		{
			name:    "reclaim nominal quota from lowest priority workload, excluding non-borrowing",
			cohorts: rc("3"),
			cqs: []api.ClusterQueue{hq("q", "c", "0", anyP).Obj(), hq("q_borrowing", "r", "0", anyP).Obj(),
				hq("q_nominal", "r", "2", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_borrowing_prio_8", "q_borrowing", 8, d("1")),
				adm("admitted_borrowing_prio_9", "q_borrowing", 9, d("1")), adm("admitted_borrowing_prio_10", "q_borrowing", 9, d("1")),
				adm("admitted_nominal", "q_nominal", -2, d("2"))},
			incoming: in(0).Request(cpu, "1"), cq: "q",
			want: map[string]VictimReason{"admitted_borrowing_prio_8": reclaim},
		},
		{
			name:    "infeasible preemption all available workloads in pruned subtrees",
			cohorts: []api.Cohort{hc("r", "", ""), hc("c", "r", "2"), hc("c_other", "r", "2")},
			cqs: []api.ClusterQueue{hq("q_other", "c_other", "0", anyP).Obj(), hq("q", "c", "0", anyP).Obj(),
				hq("q_same_cohort", "c", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_other_1", "q_other", -10, d("1")), adm("admitted_other_2", "q_other", -10, d("1")),
				adm("admitted_same_cohort", "q_same_cohort", 0, d("2"))},
			incoming: in(0).Request(cpu, "2"), cq: "q",
		},
		{
			name: "hiearchical preemption with multiple resources",
			cohorts: []api.Cohort{hc("r", "", "3"), gt.MakeCohort("c").Parent("r").
				ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "4").Resource(mem, "4Gi").Obj()).Obj()},
			cqs: []api.ClusterQueue{hcm("q", "c"), hcm("q_borrowing", "r"), hcm("q_same_cohort", "c")},
			admitted: []kueueAdmitted{
				adm("admitted_borrowing", "q_borrowing", 0, d("3"), use("default", mem, "1Gi")),
				adm("admitted_same_cohort", "q_same_cohort", -2, d("1"), use("default", mem, "3Gi"))},
			incoming: in(-2).Request(cpu, "2").Request(mem, "1Gi"), cq: "q",
			want: map[string]VictimReason{"admitted_borrowing": reclaim},
		},
		{
			name:    "prefer to preempt evicted workloads",
			cohorts: rc("2"),
			cqs: []api.ClusterQueue{withBWC(hq("q", "c", "0", anyP)), hq("q_borrowing", "r", "0", anyP).Obj(),
				hq("q_same_cohort", "c", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_borrowing", "q_borrowing", -10, d("1")),
				adm("evicted_same_cohort", "q_same_cohort", -1, d("1"))},
			incoming: in(0).Request(cpu, "1"), cq: "q",
			want: map[string]VictimReason{"evicted_same_cohort": reclaim},
			differs: "the quota layer has no evicted-but-running state: the engine waits for victims it already chose " +
				"(Scheduler's victims waited for) instead of choosing them again",
			gantry: map[string]VictimReason{"admitted_borrowing": reclaim},
		},
		{
			name:    "respect lending limits",
			cohorts: rc("2"),
			cqs: []api.ClusterQueue{gt.MakeClusterQueue("q").Cohort("c").Preemption(lower, anyP).
				ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "3").Lend("2").Obj()).Obj(),
				hq("q_borrowing", "r", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_borrowing", "q_borrowing", 0, d("4"))},
			incoming: in(-2).Request(cpu, "5"), cq: "q",
			want: map[string]VictimReason{"admitted_borrowing": reclaim},
		},
		{
			name: "reclaim in complex hierarchy",
			cohorts: []api.Cohort{hc("r", "", ""), hc("c11", "r", "4"), hc("c12", "r", "4"), hc("c21", "c11", "4"),
				hc("c22", "c11", "4"), hc("c23", "c11", "4"), hc("c31", "c21", "4"), hc("c32", "c21", "4")},
			cqs: []api.ClusterQueue{hq("q1", "c12", "0", anyP).Obj(), hq("q2", "c23", "0", anyP).Obj(), hq("q3", "c22", "0", anyP).Obj(),
				hq("q4", "c32", "0", anyP).Obj(), hq("q5", "c31", "0", anyP).Obj()},
			admitted: []kueueAdmitted{adm("admitted_borrowing_1", "q1", -6, d("4")), adm("admitted_borrowing_2", "q1", -5, d("4")),
				adm("admitted_borrowing_3", "q2", -9, d("4")), adm("admitted_borrowing_4", "q2", -10, d("4")),
				adm("admitted_borrowing_5", "q3", -4, d("4")), adm("admitted_borrowing_6", "q3", -3, d("3")),
				adm("admitted_borrowing_7", "q4", 4, d("2")), adm("admitted_borrowing_8", "q4", 2, d("3"))},
			incoming: in(-2).Request(cpu, "7"), cq: "q5",
			want: map[string]VictimReason{"admitted_borrowing_1": reclaim, "admitted_borrowing_4": reclaim},
		},
	}
}

// hcm is hq with cpu and memory, both of nominal 0, reclaiming Any.
func hcm(name, cohort string) api.ClusterQueue {
	return gt.MakeClusterQueue(name).Cohort(cohort).Preemption(api.PreemptLowerPriority, api.PreemptAny).
		ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "0").Resource(mem, "0").Obj()).Obj()
}
