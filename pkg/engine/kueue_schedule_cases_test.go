package engine

import (
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// TestKueueScheduleCycleCases replays the cases of Kueue's TestSchedule
// (kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go) that concern a whole cycle:
// the order heads are tried in and the usage earlier heads leave to later ones. The
// cases one flavor assignment or one preemption decides are in pkg/admission
// (TestKueueScheduleCases).
func TestKueueScheduleCycleCases(t *testing.T) {
	runKueueCycleCases(t, kueueScheduleCycleCases())
}

// scheduleBaseCQs are TestSchedule's sales, eng-alpha, eng-beta, lend-a and lend-b
// (Kueue's borrowing limit 0 on sales, which has no cohort, is left out: its validation
// refuses it and it changes nothing).
func scheduleBaseCQs() []api.ClusterQueue {
	return append(fsBaseCQs(),
		cqOn("lend-a", "lend", cpu, "default", "3").Obj(),
		cqOn("lend-b", "lend", cpu, "default", "2").Obj())
}

// inNS is a pending workload in namespace ns (Kueue's cases reuse names across them).
func inNS(ns, name string) *gt.WorkloadWrapper { return gt.MakeWorkload(ns, name) }

func kueueScheduleCycleCases() []kueueCycleCase {
	lower, never, anyP := api.PreemptLowerPriority, api.PreemptNever, api.PreemptAny
	with := func(cqs ...api.ClusterQueue) []api.ClusterQueue { return append(scheduleBaseCQs(), cqs...) }
	gpuCQs := func(reclaim api.PreemptionPolicy) []api.ClusterQueue {
		return with(cqOn("ClusterQueueA", "root", gpuRes, "on-demand", "2").Preemption(never, reclaim).Obj(),
			cqOn("ClusterQueueB", "root", gpuRes, "on-demand", "0").Obj())
	}
	capacity := func(name string, reclaim api.PreemptionPolicy) kueueCycleCase {
		c := kueueCycleCase{
			name: name, cqs: gpuCQs(reclaim),
			running: []kueueRunning{running("a1-admitted", "ClusterQueueA", 0, amount("on-demand", gpuRes, "1"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "a2-pending").Request(gpuRes, "2"), "ClusterQueueA"),
				waiting(gt.MakeWorkload("ns", "b1-pending").Request(gpuRes, "1"), "ClusterQueueB")},
		}
		if reclaim == anyP {
			c.wantAdmitted = map[string]string{"b1-pending": "main:gpu@on-demand"}
		} // else ClusterQueueA holds its unused nominal quota for a2-pending (holds.go)
		return c
	}
	return []kueueCycleCase{
		{
			name: "admit in different cohorts", cqs: scheduleBaseCQs(),
			pending: []kueueWaiting{waiting(inNS("sales", "new").PodSet("one", 1).Request(cpu, "1"), "sales"),
				waiting(inNS("eng-alpha", "new").PodSet("one", 51).Request(cpu, "1"), "eng-alpha")},
			wantAdmitted: map[string]string{"sales/new": "one:cpu@default", "eng-alpha/new": "one:cpu@on-demand"},
		},
		{
			name: "cannot borrow if cohort was assigned and would result in overadmission", cqs: scheduleBaseCQs(),
			pending: []kueueWaiting{waiting(inNS("eng-alpha", "new").PodSet("one", 45).Request(cpu, "1"), "eng-alpha"),
				waiting(inNS("eng-beta", "new").PodSet("one", 56).Request(cpu, "1"), "eng-beta")},
			// Kueue leaves eng-beta/new (its on-demand no longer fits) for the next cycle,
			// which admits it on spot.
			wantAdmitted: map[string]string{"eng-alpha/new": "one:cpu@on-demand", "eng-beta/new": "one:cpu@spot"},
			differs:      sameCycle,
		},
		{
			name: "can borrow if cohort was assigned and will not result in overadmission", cqs: scheduleBaseCQs(),
			pending: []kueueWaiting{waiting(inNS("eng-alpha", "new").PodSet("one", 45).Request(cpu, "1"), "eng-alpha"),
				waiting(inNS("eng-beta", "new").PodSet("one", 55).Request(cpu, "1"), "eng-beta")},
			wantAdmitted: map[string]string{"eng-alpha/new": "one:cpu@on-demand", "eng-beta/new": "one:cpu@on-demand"},
		},
		{
			name: "can borrow if needs reclaim from cohort in different flavor", cqs: scheduleBaseCQs(),
			running: []kueueRunning{running("user-on-demand", "eng-beta", 0, amount("on-demand", cpu, "50")),
				running("user-spot", "eng-beta", 0, amount("spot", cpu, "1"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "can-reclaim").Request(cpu, "100"), "eng-alpha"),
				waiting(gt.MakeWorkload("ns", "needs-to-borrow").Request(cpu, "1"), "eng-beta")},
			wantAdmitted: map[string]string{"needs-to-borrow": "main:cpu@on-demand"},
		},
		{
			name: "multiple CQs need preemption",
			cqs: with(gt.MakeClusterQueue("other-alpha").Cohort("other").ResourceGroup(gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Borrow("50").Obj()).Obj(),
				gt.MakeClusterQueue("other-beta").Cohort("other").Preemption(lower, anyP).
					ResourceGroup(gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Borrow("10").Obj()).Obj()),
			running: []kueueRunning{running("use-all", "other-alpha", 0, amount("on-demand", cpu, "100"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "preemptor").Priority(-1).Request(cpu, "1"), "other-beta"),
				waiting(gt.MakeWorkload("ns", "pending").Priority(1).Request(cpu, "1"), "other-alpha")},
			wantPreempted: []string{"use-all"},
		},
		{
			name: "no overadmission while borrowing",
			cqs: with(gt.MakeClusterQueue("eng-gamma").Cohort("eng").Preemption(lower, anyP).ResourceGroup(
				gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Borrow("10").Obj(),
				gt.MakeFlavorQuotas("spot").Resource(cpu, "0").Borrow("100").Obj()).Obj()),
			running: []kueueRunning{running("existing", "eng-gamma", 0, amount("on-demand", cpu, "51"), amount("spot", cpu, "100"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "new").PodSet("one", 50).Request(cpu, "1").Created(-2*time.Second), "eng-beta"),
				waiting(gt.MakeWorkload("ns", "new-alpha").PodSet("one", 1).Request(cpu, "1").Created(-time.Second), "eng-alpha"),
				waiting(gt.MakeWorkload("ns", "new-gamma").PodSet("one", 50).Request(cpu, "1"), "eng-gamma")},
			wantAdmitted: map[string]string{"new": "one:cpu@on-demand", "new-alpha": "one:cpu@on-demand"},
		},
		{
			name: "preemption while borrowing, workload waiting for preemption should not block a borrowing workload in another CQ",
			cqs: with(gt.MakeClusterQueue("cq_shared").Cohort("preemption-while-borrowing").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "4").Borrow("0").Obj()).Obj(),
				gt.MakeClusterQueue("cq_a").Cohort("preemption-while-borrowing").Preemption(never, lower).BorrowWithinCohort(lower, nil).
					ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "0").Borrow("3").Obj()).Obj(),
				gt.MakeClusterQueue("cq_b").Cohort("preemption-while-borrowing").Preemption(never, lower).BorrowWithinCohort(lower, nil).
					ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "0").Obj()).Obj()),
			running: []kueueRunning{running("admitted_a", "cq_a", 0, amount("default", cpu, "2"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "a").Request(cpu, "3").Created(time.Second), "cq_a"),
				waiting(gt.MakeWorkload("ns", "b").Request(cpu, "1").Created(2*time.Second), "cq_b")},
			wantAdmitted: map[string]string{"b": "main:cpu@default"},
		},
		{
			name: "minimal preemptions when target queue is exhausted",
			cqs: with(cqOn("other-alpha", "other", cpu, "on-demand", "2").Preemption(lower, anyP).Obj(),
				cqOn("other-beta", "other", cpu, "on-demand", "2").Obj(), cqOn("other-gamma", "other", cpu, "on-demand", "2").Obj()),
			running: []kueueRunning{running("a1", "other-alpha", -2, amount("on-demand", cpu, "1")), running("a2", "other-alpha", -2, amount("on-demand", cpu, "1")),
				running("a3", "other-alpha", -1, amount("on-demand", cpu, "1")), running("b1", "other-beta", 0, amount("on-demand", cpu, "1")),
				running("b2", "other-beta", 0, amount("on-demand", cpu, "1")), running("b3", "other-beta", 0, amount("on-demand", cpu, "1"))},
			pending:       []kueueWaiting{waiting(gt.MakeWorkload("ns", "incoming").Request(cpu, "2"), "other-alpha")},
			wantPreempted: []string{"a1", "a2"},
		},
		{
			name: "A workload is only eligible to do preemptions if it fits fully within nominal quota",
			cqs: with(cqOn("other-alpha", "other", cpu, "on-demand", "2").Preemption(lower, anyP).Obj(),
				cqOn("other-beta", "other", cpu, "on-demand", "2").Obj()),
			running: []kueueRunning{running("a1", "other-alpha", -1, amount("on-demand", cpu, "1")), running("b1", "other-beta", -1, amount("on-demand", cpu, "1"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "incoming").Priority(1).Request(cpu, "3"), "other-alpha")},
		},
		{
			name: "multiple preemptions without borrowing",
			cqs: with(cqOn("other-alpha", "other", cpu, "default", "2").Preemption(lower, never).Obj(),
				cqOn("other-beta", "other", cpu, "default", "2").Preemption(lower, never).Obj()),
			running: []kueueRunning{running("a1", "other-alpha", 0, amount("default", cpu, "2")), running("b1", "other-beta", 0, amount("default", cpu, "2"))},
			pending: []kueueWaiting{waiting(inNS("eng-alpha", "preemptor").Priority(100).Request(cpu, "2"), "other-alpha"),
				waiting(inNS("eng-beta", "preemptor").Priority(100).Request(cpu, "2"), "other-beta")},
			wantPreempted: []string{"a1", "b1"},
		},
		{
			name: "multiple preemptions preemption possible after earlier workload fits",
			cqs: with(cqOn("other-alpha", "other", cpu, "default", "1").Preemption(lower, never).Obj(),
				cqOn("other-beta", "other", cpu, "default", "2").Preemption(lower, never).Obj()),
			running: []kueueRunning{running("b1", "other-beta", 0, amount("default", cpu, "2"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "fit").Priority(100).Request(cpu, "1"), "other-alpha"),
				waiting(gt.MakeWorkload("ns", "preemptor").Priority(99).Request(cpu, "2"), "other-beta")},
			wantAdmitted:  map[string]string{"fit": "main:cpu@default"},
			wantPreempted: []string{"b1"},
		},
		{
			name: "multiple preemptions skip preemption when shared limited resource",
			cqs: with(cqOn("other-alpha", "other", cpu, "default", "2").Preemption(lower, never).BorrowWithinCohort(lower, nil).Obj(),
				cqOn("other-beta", "other", cpu, "default", "2").Preemption(lower, never).BorrowWithinCohort(lower, nil).Obj(),
				cqOn("resource-bank", "other", cpu, "default", "1").Obj()),
			running: []kueueRunning{running("a1", "other-alpha", 0, amount("default", cpu, "2")), running("b1", "other-beta", 0, amount("default", cpu, "2"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "preemptor").Priority(100).Request(cpu, "3"), "other-alpha"),
				waiting(gt.MakeWorkload("ns", "pretending-preemptor").Priority(99).Request(cpu, "3"), "other-beta")},
			// a1 only: the cohort cannot hold both preemptors (holds.go).
			wantPreempted: []string{"a1"},
		},
		{
			name: "not enough resources", cqs: scheduleBaseCQs(),
			pending: []kueueWaiting{waiting(inNS("sales", "new").PodSet("one", 1).Request(cpu, "100"), "sales")},
		},
		{
			name: "workload requiring reclaimation prioritized over wl in another full cq",
			cqs: with(cqOn("CQ1", "other", gpuRes, "on-demand", "10").Obj(), cqOn("CQ2", "other", gpuRes, "on-demand", "10").Preemption(never, anyP).Obj(),
				cqOn("CQ3", "other", gpuRes, "on-demand", "0").Obj()),
			running: []kueueRunning{running("Admitted-Workload-1", "CQ1", 0, amount("on-demand", gpuRes, "5")),
				running("Admitted-Workload-2", "CQ3", 0, amount("on-demand", gpuRes, "5")), running("Admitted-Workload-3", "CQ3", 1, amount("on-demand", gpuRes, "5"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "WL1").Request(gpuRes, "10"), "CQ1"),
				waiting(gt.MakeWorkload("ns", "WL2").Request(gpuRes, "10").Created(time.Second), "CQ2")},
			wantPreempted: []string{"Admitted-Workload-2"},
		},
		capacity("capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)", anyP),
		capacity("capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=LowerPriority)", lower),
		capacity("capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)", never),
		{
			name:    "in a hierarchical cohort, workload borrowing less is scheduled first",
			cohorts: []api.Cohort{cohortOn("root", "", cpu), cohortOn("guaranteed", "root", cpu, "default", "4")},
			cqs:     with(cqOn("guaranteed", "guaranteed", cpu, "default", "0").Obj(), cqOn("best-effort", "root", cpu, "default", "0").Obj()),
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "guaranteed").PodSet("one", 1).Request(cpu, "4"), "guaranteed"),
				waiting(gt.MakeWorkload("ns", "best-effort").Priority(3).PodSet("one", 1).Request(cpu, "4"), "best-effort")},
			// guaranteed goes first: its quota comes from its own cohort (borrowing level 1),
			// best-effort's from the root (2), whatever their priorities.
			wantAdmitted: map[string]string{"guaranteed": "one:cpu@default"},
		},
		{
			name:         "admit workload with zero-quantity request for resource not in ClusterQueue",
			cqs:          scheduleBaseCQs(),
			pending:      []kueueWaiting{waiting(gt.MakeWorkload("ns", "zero-resource-wl").Request(cpu, "1").Request(exGPU, "0"), "sales")},
			wantAdmitted: map[string]string{"zero-resource-wl": "main:cpu@default"},
		},
		{
			name:          "preempt when workload requests zero of a resource not defined in ClusterQueue",
			cqs:           with(cqOn("preempt-zero-gpu-cq", "", cpu, "default", "4").Preemption(lower, never).Obj()),
			running:       []kueueRunning{running("low-priority", "preempt-zero-gpu-cq", -1, amount("default", cpu, "4"))},
			pending:       []kueueWaiting{waiting(gt.MakeWorkload("ns", "preemptor").Request(cpu, "2").Request(exGPU, "0"), "preempt-zero-gpu-cq")},
			wantPreempted: []string{"low-priority"},
		},
	}
}
