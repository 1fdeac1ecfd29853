package engine

import (
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// TestKueueScheduleForFairSharingCases replays the cases of Kueue's
// TestScheduleForFairSharing (kubernetes-sigs/kueue pkg/scheduler/scheduler_fs_test.go)
// as one Gantry cycle each. Its preference case is in pkg/admission
// (TestKueueScheduleFairSharingCases), where the flavor choice is made.
func TestKueueScheduleForFairSharingCases(t *testing.T) {
	runKueueCycleCases(t, kueueFairSharingCases())
}

const (
	cpu          = resources.CPU
	gpuRes       = resources.Name("gpu")
	exGPU        = resources.Name("example.com/gpu")
	alphaR       = resources.Name("alpha-resource")
	betaR        = resources.Name("beta-resource")
	gammaR       = resources.Name("gamma-resource")
	sameCycle    = "Gantry rates each head against the usage of the cycle's earlier admissions and may admit it on a later flavor at once; Kueue keeps the flavor it nominated at the cycle's start and retries next cycle"
	emptyReclaim = "Kueue's case leaves reclaimWithinCohort empty, which its may-preempt-while-borrowing check reads as not Never (its API defaults it to Never); Gantry reads empty as Never, so the borrowing preemptors look for no victims"
	tournam      = "Gantry ranks each pending workload on its own (parked ones must not move the others), by its share after admission at each cohort from the root down; Kueue's tournament first picks one head per subtree (d1 beats e1 inside B by d's share), which no order of single workloads expresses"
)

// fsBaseCQs are the ClusterQueues of TestScheduleForFairSharing the cases use: sales
// (no cohort), eng-alpha and eng-beta of cohort eng (namespace selectors and StrictFIFO
// are moot with one head per queue).
func fsBaseCQs() []api.ClusterQueue {
	return []api.ClusterQueue{
		gt.MakeClusterQueue("sales").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "50").Obj()).Obj(),
		gt.MakeClusterQueue("eng-alpha").Cohort("eng").ResourceGroup(
			gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Borrow("50").Obj(),
			gt.MakeFlavorQuotas("spot").Resource(cpu, "100").Borrow("0").Obj()).Obj(),
		gt.MakeClusterQueue("eng-beta").Cohort("eng").Preemption(api.PreemptLowerPriority, api.PreemptAny).
			ResourceGroup(
				gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Borrow("10").Obj(),
				gt.MakeFlavorQuotas("spot").Resource(cpu, "0").Borrow("100").Obj()).
			ResourceGroup(gt.MakeFlavorQuotas("model-a").Resource(exGPU, "20").Borrow("0").Obj()).Obj(),
	}
}

// cqOn is a ClusterQueue of cohort (none when "") with nominal quota per flavor of
// one resource r, pairs of flavor and quantity.
func cqOn(name, cohort string, r resources.Name, flavorQuota ...string) *gt.ClusterQueueWrapper {
	var fqs []api.FlavorQuotas
	for i := 0; i+1 < len(flavorQuota); i += 2 {
		fqs = append(fqs, gt.MakeFlavorQuotas(flavorQuota[i]).Resource(r, flavorQuota[i+1]).Obj())
	}
	return gt.MakeClusterQueue(name).Cohort(cohort).ResourceGroup(fqs...)
}

// cohortOn is a cohort with parent (none when "") and quota per flavor of resource r.
func cohortOn(name, parent string, r resources.Name, flavorQuota ...string) api.Cohort {
	c := gt.MakeCohort(name).Parent(parent)
	var fqs []api.FlavorQuotas
	for i := 0; i+1 < len(flavorQuota); i += 2 {
		fqs = append(fqs, gt.MakeFlavorQuotas(flavorQuota[i]).Resource(r, flavorQuota[i+1]).Obj())
	}
	if len(fqs) > 0 {
		c = c.ResourceGroup(fqs...)
	}
	return c.Obj()
}

// wl is a pending workload of one pod set "one" of count pods requesting q of r each.
func wl(name string, count int32, r resources.Name, q string) *gt.WorkloadWrapper {
	return gt.MakeWorkload("ns", name).PodSet("one", count).Request(r, q)
}

func kueueFairSharingCases() []kueueCycleCase {
	lower, never, anyP := api.PreemptLowerPriority, api.PreemptNever, api.PreemptAny
	return []kueueCycleCase{
		{
			name: "with fair sharing: schedule workload with lowest share first", fair: true,
			cqs: append(fsBaseCQs(), cqOn("eng-shared", "eng", cpu, "on-demand", "10").Obj()),
			running: []kueueRunning{running("all_nominal", "eng-alpha", 0, amount("on-demand", cpu, "50")),
				running("borrowing", "eng-beta", 0, amount("on-demand", cpu, "55"))},
			pending: []kueueWaiting{waiting(wl("older_new", 1, cpu, "1").Created(-time.Minute), "eng-beta"),
				waiting(wl("new", 5, cpu, "1"), "eng-alpha")},
			// Kueue leaves older_new for the next cycle, which admits it on spot.
			wantAdmitted: map[string]string{"new": "one:cpu@on-demand", "older_new": "one:cpu@spot"},
			differs:      sameCycle,
		},
		{
			name: "with fair sharing: nominal-first ordering admits workload fitting within nominal despite higher CQ DRS", fair: true,
			cqs: []api.ClusterQueue{
				// Kueue's case lists cpu in two resource groups (on-demand, then spot), which
				// its API refuses; one group with the two flavors in that order is the same.
				gt.MakeClusterQueue("fs-nom-a").Cohort("fs-nom").ResourceGroup(
					gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Borrow("0").Obj(),
					gt.MakeFlavorQuotas("spot").Resource(cpu, "50").Borrow("50").Obj()).Obj(),
				gt.MakeClusterQueue("fs-nom-b").Cohort("fs-nom").ResourceGroup(
					gt.MakeFlavorQuotas("on-demand").Resource(cpu, "10").Borrow("50").Obj(),
					gt.MakeFlavorQuotas("spot").Resource(cpu, "50").Borrow("0").Obj()).Obj(),
			},
			running: []kueueRunning{running("spot-heavy", "fs-nom-a", 0, amount("spot", cpu, "80")),
				running("light-usage", "fs-nom-b", 0, amount("on-demand", cpu, "5"))},
			pending: []kueueWaiting{waiting(wl("borrow-wl", 15, cpu, "1").Created(-time.Minute), "fs-nom-b"),
				waiting(wl("nom-wl", 45, cpu, "1"), "fs-nom-a")},
			// nom-wl goes first (fs-nom-a would not borrow on-demand), as in Kueue, which
			// leaves borrow-wl (on-demand no longer fits) for the next cycle, on spot.
			wantAdmitted: map[string]string{"nom-wl": "one:cpu@on-demand", "borrow-wl": "one:cpu@spot"},
			differs:      sameCycle,
		},
		{
			name: "with fair sharing: hierarchical nominal-first prefers non-borrowing subtree", fair: true,
			cohorts: []api.Cohort{cohortOn("root", "", cpu), cohortOn("Cohort-A", "root", cpu, "on-demand", "10"), cohortOn("Cohort-B", "root", cpu)},
			cqs: []api.ClusterQueue{cqOn("cq-a", "Cohort-A", cpu, "on-demand", "0").Obj(), cqOn("cq-b", "Cohort-B", cpu, "on-demand", "5").Obj(),
				cqOn("cq-c", "Cohort-B", cpu, "on-demand", "0").Obj()},
			running:      []kueueRunning{running("c0", "cq-c", 0, amount("on-demand", cpu, "10"))},
			pending:      []kueueWaiting{waiting(wl("wl-a", 1, cpu, "5"), "cq-a"), waiting(wl("wl-b", 1, cpu, "5"), "cq-b")},
			wantAdmitted: map[string]string{"wl-a": "one:cpu@on-demand"},
		},
		{
			name: "with fair sharing: hierarchical nominal-first with deeper nesting", fair: true,
			cohorts: []api.Cohort{cohortOn("root", "", cpu), cohortOn("Cohort-A", "root", cpu), cohortOn("SUB-A", "Cohort-A", cpu, "on-demand", "10"),
				cohortOn("Cohort-B", "root", cpu)},
			cqs: []api.ClusterQueue{cqOn("cq-a", "SUB-A", cpu, "on-demand", "0").Obj(), cqOn("cq-b", "Cohort-B", cpu, "on-demand", "5").Obj(),
				cqOn("cq-c", "Cohort-B", cpu, "on-demand", "0").Obj()},
			running:      []kueueRunning{running("c0", "cq-c", 0, amount("on-demand", cpu, "10"))},
			pending:      []kueueWaiting{waiting(wl("wl-a", 1, cpu, "5"), "cq-a"), waiting(wl("wl-b", 1, cpu, "5"), "cq-b")},
			wantAdmitted: map[string]string{"wl-a": "one:cpu@on-demand"},
		},
		{
			name: "with fair sharing: hierarchical nominal-first with mixed CQ and cohort quotas", fair: true,
			cohorts: []api.Cohort{cohortOn("root", "", cpu), cohortOn("Cohort-A", "root", cpu, "on-demand", "10"),
				cohortOn("Cohort-B", "root", cpu, "on-demand", "10")},
			cqs: []api.ClusterQueue{cqOn("cq-a1", "Cohort-A", cpu, "on-demand", "5").Obj(), cqOn("cq-a2", "Cohort-A", cpu, "on-demand", "3").Obj(),
				cqOn("cq-b", "Cohort-B", cpu, "on-demand", "5").Obj(), cqOn("cq-c", "Cohort-B", cpu, "on-demand", "3").Obj()},
			running: []kueueRunning{running("a2-admitted", "cq-a2", 0, amount("on-demand", cpu, "6")),
				running("c-admitted", "cq-c", 0, amount("on-demand", cpu, "20"))},
			pending:      []kueueWaiting{waiting(wl("wl-a1", 1, cpu, "7"), "cq-a1"), waiting(wl("wl-b", 1, cpu, "4"), "cq-b")},
			wantAdmitted: map[string]string{"wl-a1": "one:cpu@on-demand"},
		},
		{
			name: "with fair sharing: hierarchical nominal-first per-flavor ignores cross-flavor borrowing", fair: true,
			cohorts: []api.Cohort{cohortOn("root", "", cpu), cohortOn("Cohort-A", "root", cpu, "on-demand", "10"),
				cohortOn("Cohort-B", "root", cpu, "spot", "10")},
			cqs: []api.ClusterQueue{cqOn("cq-a", "Cohort-A", cpu, "on-demand", "0", "spot", "0").Obj(),
				cqOn("cq-b", "Cohort-B", cpu, "on-demand", "5", "spot", "0").Obj()},
			running: []kueueRunning{running("spot-admitted", "cq-a", 0, amount("spot", cpu, "5")),
				running("od-admitted", "cq-b", 0, amount("on-demand", cpu, "8"))},
			pending: []kueueWaiting{waiting(wl("wl-a", 1, cpu, "4"), "cq-a"), waiting(wl("wl-b", 1, cpu, "4"), "cq-b")},
			// wl-a goes first, on on-demand (its subtree does not borrow on-demand), as in
			// Kueue, which leaves wl-b (on-demand no longer fits) for the next cycle, on spot.
			wantAdmitted: map[string]string{"wl-a": "one:cpu@on-demand", "wl-b": "one:cpu@spot"},
			differs:      sameCycle,
		},
		{
			name: "hierarchical fair sharing schedule workload which wins tournament", fair: true,
			cohorts: []api.Cohort{cohortOn("A", "", cpu, "on-demand", "200"), cohortOn("B", "A", cpu), cohortOn("C", "A", cpu)},
			cqs: []api.ClusterQueue{cqOn("d", "B", cpu, "on-demand", "0").Obj(), cqOn("e", "B", cpu, "on-demand", "0").Obj(),
				cqOn("f", "C", cpu, "on-demand", "0").Obj(), cqOn("g", "C", cpu, "on-demand", "0").Obj()},
			running: []kueueRunning{running("d0", "d", 0, amount("on-demand", cpu, "10")), running("e0", "e", 0, amount("on-demand", cpu, "20")),
				running("g0", "g", 0, amount("on-demand", cpu, "100"))},
			pending: []kueueWaiting{waiting(wl("d1", 1, cpu, "70"), "d"), waiting(wl("e1", 1, cpu, "61"), "e"),
				waiting(wl("f1", 1, cpu, "1"), "f"), waiting(wl("g1", 1, cpu, "1"), "g")},
			// Kueue admits d1 alone (B's share after it, 100, beats C's 101); Gantry tries e1
			// first (B's share after e1, 91, is the lowest at A), then f1 and g1.
			wantAdmitted: map[string]string{"e1": "one:cpu@on-demand", "f1": "one:cpu@on-demand", "g1": "one:cpu@on-demand"},
			differs:      tournam,
		},
		{
			name: "fair sharing schedule workload with lowest drf after admission", fair: true,
			cohorts: []api.Cohort{cohortOn("A", "", cpu, "on-demand", "100")},
			cqs:     []api.ClusterQueue{cqOn("b", "A", cpu, "on-demand", "0").Obj(), cqOn("c", "A", cpu, "on-demand", "0").Obj()},
			running: []kueueRunning{running("b0", "b", 0, amount("on-demand", cpu, "10"))},
			pending: []kueueWaiting{waiting(wl("b1", 1, cpu, "50"), "b"), waiting(wl("c1", 1, cpu, "75"), "c")},
			// b1 goes first: with it b would borrow 60 of A's 100, c 75 with c1.
			wantAdmitted: map[string]string{"b1": "one:cpu@on-demand"},
		},
		{
			name: "fair sharing two queues with weight 0 schedules workload which borrows less", fair: true,
			cohorts: []api.Cohort{cohortOn("A", "", cpu, "on-demand", "8")},
			cqs: []api.ClusterQueue{cqOn("b", "A", cpu, "on-demand", "0").Weight(0).Preemption(never, anyP).Obj(),
				cqOn("c", "A", cpu, "on-demand", "0").Weight(0).Preemption(never, anyP).Obj()},
			running: []kueueRunning{running("b0", "b", 0, amount("on-demand", cpu, "4"))},
			pending: []kueueWaiting{waiting(wl("b1", 1, cpu, "4").Priority(9001), "b"), waiting(wl("c1", 1, cpu, "4"), "c")},
			// c1, which borrows less, goes before the higher-priority b1 (two weight-0
			// shares compare unweighted).
			wantAdmitted: map[string]string{"c1": "one:cpu@on-demand"},
		},
		{
			name: "fair sharing two queues with high weight schedules workload which borrows less", fair: true,
			cohorts: []api.Cohort{cohortOn("A", "", cpu, "on-demand", "8")},
			cqs: []api.ClusterQueue{cqOn("b", "A", cpu, "on-demand", "0").Weight(123456789000).Preemption(never, anyP).Obj(),
				cqOn("c", "A", cpu, "on-demand", "0").Weight(123456789000).Preemption(never, anyP).Obj()},
			running:      []kueueRunning{running("b0", "b", 0, amount("on-demand", cpu, "4"))},
			pending:      []kueueWaiting{waiting(wl("b1", 1, cpu, "4").Priority(9001), "b"), waiting(wl("c1", 1, cpu, "4"), "c")},
			wantAdmitted: map[string]string{"c1": "one:cpu@on-demand"},
		},
		{
			name: "fair sharing schedule singleton cqs and cq without cohort", fair: true,
			cohorts: []api.Cohort{cohortOn("A", "", cpu, "on-demand", "10"), cohortOn("B", "", cpu)},
			cqs: []api.ClusterQueue{cqOn("a", "A", cpu, "on-demand", "0").Obj(), cqOn("b", "B", cpu, "on-demand", "10").Obj(),
				cqOn("c", "", cpu, "on-demand", "10").Obj()},
			pending:      []kueueWaiting{waiting(wl("a1", 1, cpu, "10"), "a"), waiting(wl("b1", 1, cpu, "10"), "b"), waiting(wl("c1", 1, cpu, "10"), "c")},
			wantAdmitted: map[string]string{"a1": "one:cpu@on-demand", "b1": "one:cpu@on-demand", "c1": "one:cpu@on-demand"},
		},
		{
			name: "fair sharing schedule highest priority first", fair: true,
			cohorts:      []api.Cohort{cohortOn("A", "", cpu, "on-demand", "10"), cohortOn("B", "", cpu)},
			cqs:          []api.ClusterQueue{cqOn("b", "A", cpu, "on-demand", "0").Obj(), cqOn("c", "A", cpu, "on-demand", "0").Obj()},
			pending:      []kueueWaiting{waiting(wl("b1", 1, cpu, "10").Priority(99), "b"), waiting(wl("c1", 1, cpu, "10").Priority(101), "c")},
			wantAdmitted: map[string]string{"c1": "one:cpu@on-demand"},
		},
		{
			name: "fair sharing schedule earliest timestamp first", fair: true,
			cohorts: []api.Cohort{cohortOn("A", "", cpu, "on-demand", "10"), cohortOn("B", "", cpu)},
			cqs:     []api.ClusterQueue{cqOn("b", "A", cpu, "on-demand", "0").Obj(), cqOn("c", "A", cpu, "on-demand", "0").Obj()},
			pending: []kueueWaiting{waiting(wl("b1", 1, cpu, "10").Priority(101).Created(time.Second), "b"),
				waiting(wl("c1", 1, cpu, "10").Priority(101), "c")},
			wantAdmitted: map[string]string{"c1": "one:cpu@on-demand"},
		},
		{
			name: "with fair sharing: preempt workload from CQ with the highest share", fair: true,
			cqs: append(fsBaseCQs(), cqOn("eng-gamma", "eng", cpu, "on-demand", "50").Obj()),
			// Kueue admits them all at one instant and breaks the tie by name; recorded in
			// reverse, Gantry's most recently admitted first gives the same order.
			running: []kueueRunning{running("gamma4", "eng-gamma", 0, amount("on-demand", cpu, "20")),
				running("gamma3", "eng-gamma", 0, amount("on-demand", cpu, "20")), running("gamma2", "eng-gamma", 0, amount("on-demand", cpu, "20")),
				running("gamma1", "eng-gamma", 0, amount("on-demand", cpu, "10")), running("alpha4", "eng-alpha", 0, amount("on-demand", cpu, "20")),
				running("alpha3", "eng-alpha", 0, amount("on-demand", cpu, "20")), running("alpha2", "eng-alpha", 0, amount("on-demand", cpu, "20")),
				running("alpha1", "eng-alpha", 0, amount("on-demand", cpu, "20")), running("all_spot", "eng-alpha", 0, amount("spot", cpu, "100"))},
			pending:       []kueueWaiting{waiting(gt.MakeWorkload("ns", "preemptor").Request(cpu, "30"), "eng-beta")},
			wantPreempted: []string{"alpha1", "gamma1"},
		},
		{
			name: "multiple preemptions within cq when fair sharing", fair: true,
			cqs: []api.ClusterQueue{
				cqOn("other-alpha", "other", cpu, "default", "2").Preemption(lower, never).Obj(),
				cqOn("other-beta", "other", cpu, "default", "2").Preemption(lower, never).Obj(),
				cqOn("other-gamma", "other", cpu, "default", "2").Preemption(lower, never).Obj(),
				cqOn("resource-bank", "other", cpu, "default", "3").Obj(),
			},
			running: []kueueRunning{running("a0", "other-alpha", 0, amount("default", cpu, "3")), running("b0", "other-beta", 0, amount("default", cpu, "3")),
				running("c0", "other-gamma", 0, amount("default", cpu, "3"))},
			pending: []kueueWaiting{waiting(gt.MakeWorkload("ns", "a1").Priority(100).Request(cpu, "3"), "other-alpha"),
				waiting(gt.MakeWorkload("ns", "b1").Priority(100).Request(cpu, "3"), "other-beta"),
				waiting(gt.MakeWorkload("ns", "c1").Priority(100).Request(cpu, "3"), "other-gamma")},
			// Kueue preempts a0, b0 and c0 in their queues.
			differs: emptyReclaim,
		},
		{
			name: "multiple preemptions skip overlapping preemption targets", fair: true,
			cqs: []api.ClusterQueue{
				gt.MakeClusterQueue("other-alpha").Cohort("other").Preemption(lower, anyP).
					ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "0").Resource(alphaR, "1").Obj()).Obj(),
				gt.MakeClusterQueue("other-beta").Cohort("other").Preemption(lower, anyP).
					ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "0").Resource(betaR, "1").Obj()).Obj(),
				gt.MakeClusterQueue("other-gamma").Cohort("other").Preemption(lower, anyP).
					ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "0").Resource(gammaR, "1").Obj()).Obj(),
				cqOn("resource-bank", "other", cpu, "default", "9").Obj(),
			},
			running: []kueueRunning{running("a0", "other-alpha", 0, amount("default", alphaR, "1")),
				running("b0", "other-beta", 0, amount("default", betaR, "1")),
				running("c0", "other-gamma", 0, amount("default", cpu, "9"), amount("default", gammaR, "1"))},
			pending: []kueueWaiting{
				waiting(gt.MakeWorkload("ns", "a1").Priority(100).Request(cpu, "3").Request(alphaR, "1"), "other-alpha"),
				waiting(gt.MakeWorkload("ns", "b1").Priority(99).Request(cpu, "3").Request(betaR, "1"), "other-beta")},
			wantPreempted: []string{"a0", "c0"},
		},
		{
			name: "not enough resources with fair sharing enabled", fair: true,
			cqs:     fsBaseCQs(),
			pending: []kueueWaiting{waiting(wl("new", 1, cpu, "100"), "sales")},
		},
		{
			name: "with fair sharing: prefer reclamation over cq priority based preemption; with preemption while borrowing", fair: true,
			cqs: []api.ClusterQueue{
				cqOn("other-alpha", "other", gpuRes, "on-demand", "7", "spot", "7").Preemption(lower, lower).Obj(),
				cqOn("other-beta", "other", gpuRes, "on-demand", "3", "spot", "3").Obj(),
			},
			running: []kueueRunning{running("a1", "other-alpha", 50, amount("on-demand", gpuRes, "5")),
				running("b1", "other-beta", 50, amount("spot", gpuRes, "5"))},
			pending:       []kueueWaiting{waiting(gt.MakeWorkload("ns", "preemptor").Priority(100).Request(gpuRes, "8"), "other-alpha")},
			wantPreempted: []string{"b1"},
		},
		preferLocalCapacity("prefer flavor with most local capacity", true),
		preferLocalCapacity("prefer flavor with most local capacity (FS=false)", false),
		{
			name: "fair sharing: in-CQ preemption for CQ without cohort; repro for nil pointer panic", fair: true,
			cqs:           []api.ClusterQueue{cqOn("no-cohort-cq", "", cpu, "default", "4").Preemption(lower, never).Obj()},
			running:       []kueueRunning{running("nc-low", "no-cohort-cq", -1, amount("default", cpu, "4"))},
			pending:       []kueueWaiting{waiting(gt.MakeWorkload("ns", "nc-high").Priority(100).Request(cpu, "4"), "no-cohort-cq")},
			wantPreempted: []string{"nc-low"},
		},
	}
}

// preferLocalCapacity is Kueue's "prefer flavor with most local capacity" (with and
// without fair sharing): on-demand has room only at the root cohort, spot in the child
// cohort, so spot borrows from nearer.
func preferLocalCapacity(name string, fair bool) kueueCycleCase {
	return kueueCycleCase{
		name: name, fair: fair,
		cohorts: []api.Cohort{cohortOn("root-cohort", "", gpuRes, "on-demand", "2", "spot", "0"),
			cohortOn("child-cohort", "root-cohort", gpuRes, "on-demand", "5", "spot", "7")},
		cqs: []api.ClusterQueue{cqOn("queue1", "child-cohort", gpuRes, "on-demand", "3", "spot", "3").
			Preemption(api.PreemptLowerPriority, api.PreemptAny).Fungibility(api.TryNextFlavor, api.TryNextFlavor).Obj()},
		running: []kueueRunning{running("a1", "queue1", 0, amount("on-demand", gpuRes, "8")),
			running("a2", "queue1", 0, amount("spot", gpuRes, "3"))},
		pending:      []kueueWaiting{waiting(gt.MakeWorkload("ns", "a3").Request(gpuRes, "1"), "queue1")},
		wantAdmitted: map[string]string{"a3": "main:gpu@spot"},
	}
}
