package admission

import (
	"slices"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// Cases of Kueue's TestFairPreemptions (pkg/scheduler/preemption/preemption_fair_test.go):
// preemption under fair sharing, cpu in flavor "default" unless a case says otherwise.
// Kueue admits every workload of a case at the same instant and breaks ties by name;
// admitting them in reverse order gives Gantry's "most recently admitted first" the
// same order.

// kueueFairCase is a TestFairPreemptions case: a preemption case run with fair sharing.
type kueueFairCase struct {
	kueuePreemptionCase
	strategies []FairStrategy
	flavors    []api.ResourceFlavor
}

func TestKueueFairPreemptionCases(t *testing.T) {
	for _, tc := range kueueFairCases() {
		t.Run(tc.name, func(t *testing.T) {
			pc := tc.kueuePreemptionCase
			pc.admitted = slices.Clone(pc.admitted)
			slices.Reverse(pc.admitted)
			pc.flavors = tc.flavors
			runKueuePreemptionCase(t, pc, Options{FairSharing: FairSharingConfig{Enabled: true, Strategies: tc.strategies}})
		})
	}
}

// fairBaseCQs are Kueue's baseCQs: a, b and c with 3 cpu each (LowerPriority within,
// Any in the cohort, borrowWithinCohort LowerPriority up to priority -3) and
// preemptible with none, all in cohort "all".
func fairBaseCQs() []api.ClusterQueue {
	thr := int32(-3)
	var out []api.ClusterQueue
	for _, n := range []string{"a", "b", "c"} {
		out = append(out, fq(n, "all", "3", 1000).BorrowWithinCohort(api.PreemptLowerPriority, &thr).Obj())
	}
	return append(out, gt.MakeClusterQueue("preemptible").Cohort("all").
		ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "0").Obj()).Obj())
}

// fq is a ClusterQueue of cohort with nominal cpu, weight in thousandths, preempting
// LowerPriority within the queue and Any in the cohort.
func fq(name, cohort, nominal string, weight int64) *gt.ClusterQueueWrapper {
	return gt.MakeClusterQueue(name).Cohort(cohort).Weight(weight).Preemption(api.PreemptLowerPriority, api.PreemptAny).
		ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, nominal).Obj())
}

// fqReclaim is fq preempting only in the cohort (Kueue's cases that set only
// reclaimWithinCohort).
func fqReclaim(name, cohort, nominal string, weight int64) *gt.ClusterQueueWrapper {
	return fq(name, cohort, nominal, weight).Preemption(api.PreemptNever, api.PreemptAny)
}

// fc is a cohort with weight in thousandths and cpu ("" for none).
func fc(name, parent, nominal string, weight int64) api.Cohort {
	c := hc(name, parent, nominal)
	c.FairSharing.WeightMilli = weight
	return c
}

// units are unit workloads (1 cpu) in cq, priority 0.
func units(cq string, names ...string) []kueueAdmitted {
	var out []kueueAdmitted
	for _, n := range names {
		out = append(out, adm(n, cq, 0, use("default", cpu, "1")))
	}
	return out
}

func kueueFairCases() []kueueFairCase {
	d := func(q string) FlavorAmount { return use("default", cpu, q) }
	fs, reclaim, inCQ := InCohortFairSharing, InCohortReclamation, InClusterQueue
	base := func(name string, admitted []kueueAdmitted, cq, incoming string, want map[string]VictimReason) kueueFairCase {
		return kueueFairCase{kueuePreemptionCase: kueuePreemptionCase{name: name, cqs: fairBaseCQs(), admitted: admitted,
			incoming: in(0).Request(cpu, incoming), cq: cq, want: want}}
	}
	cat := func(ls ...[]kueueAdmitted) []kueueAdmitted { return slices.Concat(ls...) }
	abc := cat(units("a", "a1", "a2", "a3"), units("b", "b1", "b2", "b3", "b4", "b5"), units("c", "c1"))
	cases := []kueueFairCase{
		base("reclaim nominal from user using the most", abc, "c", "1", map[string]VictimReason{"b1": reclaim}),
		base("can reclaim from queue using less, if taking the latest workload from user using the most isn't enough",
			[]kueueAdmitted{adm("a1", "a", 0, d("3")), adm("a2", "a", 0, d("1")), adm("b1", "b", 0, d("2")), adm("b2", "b", 0, d("3"))},
			"c", "3", map[string]VictimReason{"a1": reclaim}),
		base("reclaim borrowable quota from user using the most", abc, "a", "1", map[string]VictimReason{"b1": fs}),
		base("preempt one from each CQ borrowing",
			[]kueueAdmitted{adm("a1", "a", 0, d("0.5")), adm("a2", "a", 0, d("0.5")), adm("a3", "a", 0, d("3")),
				adm("b1", "b", 0, d("0.5")), adm("b2", "b", 0, d("0.5")), adm("b3", "b", 0, d("3"))},
			"c", "2", map[string]VictimReason{"a1": reclaim, "b1": reclaim}),
		base("can't preempt when everyone under nominal",
			cat(units("a", "a1", "a2", "a3"), units("b", "b1", "b2", "b3"), units("c", "c1", "c2", "c3")), "c", "1", nil),
		base("can't preempt when it would switch the imbalance",
			cat(units("a", "a1", "a2", "a3"), units("b", "b1", "b2", "b3", "b4", "b5")), "a", "2", nil),
		base("can preempt lower priority workloads from same CQ",
			cat([]kueueAdmitted{adm("a1_low", "a", -1, d("1")), adm("a2_low", "a", -1, d("1"))}, units("a", "a3", "a4"),
				units("b", "b1", "b2", "b3", "b4", "b5")),
			"a", "2", map[string]VictimReason{"a1_low": inCQ, "a2_low": inCQ}),
		base("can preempt a combination of same CQ and highest user",
			cat([]kueueAdmitted{adm("a_low", "a", -1, d("1"))}, units("a", "a2", "a3"), units("b", "b1", "b2", "b3", "b4", "b5", "b6")),
			"a", "2", map[string]VictimReason{"a_low": inCQ, "b1": fs}),
		base("preempt huge workload if there is no other option, as long as the target CQ gets a lower share",
			[]kueueAdmitted{adm("b1", "b", 0, d("9"))}, "a", "2", map[string]VictimReason{"b1": reclaim}),
		base("can't preempt huge workload if the incoming is also huge",
			[]kueueAdmitted{adm("a1", "a", 0, d("2")), adm("b1", "b", 0, d("7"))}, "a", "5", nil),
		base("can't preempt 2 smaller workloads if the incoming is huge",
			[]kueueAdmitted{adm("b1", "b", 0, d("2")), adm("b2", "b", 0, d("2")), adm("b3", "b", 0, d("3"))}, "a", "6", nil),
		base("preempt from target and others even if over nominal",
			[]kueueAdmitted{adm("a1_low", "a", -1, d("2")), adm("a2_low", "a", -1, d("1")), adm("b1", "b", 0, d("3")), adm("b2", "b", 0, d("3"))},
			"a", "4", map[string]VictimReason{"a1_low": inCQ, "b1": fs}),
		base("prefer to preempt workloads that don't make the target CQ have the biggest share",
			[]kueueAdmitted{adm("b1", "b", 0, d("2")), adm("b2", "b", 0, d("1")), adm("b3", "b", 0, d("2")), adm("c1", "c", 0, d("1"))},
			"a", "3.5", map[string]VictimReason{"b2": fs}),
		base("preempt from different cluster queues if the end result has a smaller max share",
			[]kueueAdmitted{adm("b1", "b", 0, d("2")), adm("b2", "b", 0, d("2.5")), adm("c1", "c", 0, d("2")), adm("c2", "c", 0, d("2.5"))},
			"a", "3.5", map[string]VictimReason{"b1": fs, "c1": fs}),
		base("scenario above does not flap",
			[]kueueAdmitted{adm("a1", "a", 0, d("3.5")), adm("b2", "b", 0, d("2.5")), adm("c2", "c", 0, d("2.5"))}, "b", "2", nil),
		base("cannot preempt if it would make the candidate CQ go under nominal after preempting one element",
			[]kueueAdmitted{adm("b1", "b", 0, d("3")), adm("b2", "b", 0, d("3")), adm("c1", "c", 0, d("3"))}, "a", "4", nil),
		base("workloads under priority threshold not capriciously preempted",
			cat(units("a", "a1", "a2", "a3"), units("b", "b1", "b2", "b3"), []kueueAdmitted{adm("preemptible1", "preemptible", -3, d("1")),
				adm("preemptible2", "preemptible", -3, d("1")), adm("preemptible3", "preemptible", -3, d("1"))}),
			"a", "2", nil),
	}
	lowHigh := []kueueAdmitted{adm("a1", "a", 0, d("3")), adm("b_low", "b", 0, d("5")), adm("b_high", "b", 1, d("1"))}
	c := base("preempt lower priority first, even if big", lowHigh, "a", "1", map[string]VictimReason{"b_low": fs})
	c.strategies = []FairStrategy{LessThanInitialShare}
	cases = append(cases, c)
	c = base("preempt workload that doesn't transfer the imbalance, even if high priority", lowHigh, "a", "1", map[string]VictimReason{"b_high": fs})
	c.strategies = []FairStrategy{LessThanOrEqualToFinalShare}
	cases = append(cases, c)
	return append(cases, kueueFairWeightCases()...)
}

// kueueFairWeightCases are the cases with weights, hierarchies and flavors of their own.
func kueueFairWeightCases() []kueueFairCase {
	fs, reclaim, inCQ := InCohortFairSharing, InCohortReclamation, InClusterQueue
	pc := func(c kueuePreemptionCase) kueueFairCase { return kueueFairCase{kueuePreemptionCase: c} }
	unitsAB := slices.Concat(units("a", "a1", "a2", "a3"), units("b", "b1", "b2", "b3", "b4", "b5", "b6"))
	prio := func(cq string, n int) []kueueAdmitted {
		var out []kueueAdmitted
		for i := 1; i <= n; i++ {
			out = append(out, adm(cq+string(rune('0'+i)), cq, int32(i), use("default", cpu, "1")))
		}
		return out
	}
	deep := []api.Cohort{hc("ROOT", "", ""), fc("A", "ROOT", "", 1010), hc("AA", "A", ""), hc("AAA", "AA", ""),
		fc("B", "ROOT", "", 990), hc("BB", "B", ""), hc("BBB", "BB", ""), hc("C", "ROOT", ""), hc("CC", "C", ""),
		hc("CCC", "CC", ""), hc("CCCC", "CCC", "1")}
	negOne := func(cq string, names ...string) []kueueAdmitted {
		var out []kueueAdmitted
		for _, n := range names {
			out = append(out, adm(n, cq, -1, use("default", cpu, "1")))
		}
		return out
	}
	nominalFirst := pc(kueuePreemptionCase{
		name: "nominal first: workload fitting within nominal can preempt despite high aggregate DRS",
		cqs: []api.ClusterQueue{
			gt.MakeClusterQueue("a").Cohort("all").Preemption(api.PreemptNever, api.PreemptAny).ResourceGroup(
				gt.MakeFlavorQuotas("premium").Resource(cpu, "3").Obj(), gt.MakeFlavorQuotas("cheap").Resource(cpu, "0").Obj()).Obj(),
			gt.MakeClusterQueue("b").Cohort("all").ResourceGroup(
				gt.MakeFlavorQuotas("premium").Resource(cpu, "0").Obj(), gt.MakeFlavorQuotas("cheap").Resource(cpu, "6").Obj()).Obj(),
		},
		admitted: []kueueAdmitted{adm("a_prem1", "a", 0, use("premium", cpu, "1")), adm("a_prem2", "a", 0, use("premium", cpu, "1")),
			adm("a_cheap1", "a", 0, use("cheap", cpu, "1")), adm("a_cheap2", "a", 0, use("cheap", cpu, "1")),
			adm("a_cheap3", "a", 0, use("cheap", cpu, "1")), adm("a_cheap4", "a", 0, use("cheap", cpu, "1")),
			adm("a_cheap5", "a", 0, use("cheap", cpu, "1")), adm("b_prem1", "b", 0, use("premium", cpu, "1"))},
		incoming: in(0).Request(cpu, "1"), cq: "a",
		// Kueue's case hands the preemptor flavor premium.
		without: map[string]bool{"cheap": true},
		want:    map[string]VictimReason{"b_prem1": reclaim},
	})
	nominalFirst.flavors = []api.ResourceFlavor{gt.MakeFlavor("premium").Obj(), gt.MakeFlavor("cheap").Obj()}
	return []kueueFairCase{
		pc(kueuePreemptionCase{
			name:     "CQ with higher weight can preempt more",
			cqs:      []api.ClusterQueue{fq("a", "all", "3", 2000).Obj(), fq("b", "all", "3", 1000).Obj(), fq("c", "all", "3", 1000).Obj()},
			admitted: unitsAB, incoming: in(0).Request(cpu, "2"), cq: "a",
			want: map[string]VictimReason{"b1": fs, "b2": fs},
		}),
		pc(kueuePreemptionCase{
			name:     "can preempt anything borrowing from CQ with 0 weight",
			cqs:      []api.ClusterQueue{fq("a", "all", "3", 1000).Obj(), fq("b", "all", "3", 0).Obj(), fq("c", "all", "3", 1000).Obj()},
			admitted: unitsAB, incoming: in(0).Request(cpu, "3"), cq: "a",
			want: map[string]VictimReason{"b1": fs, "b2": fs, "b3": fs},
		}),
		pc(kueuePreemptionCase{
			name:     "can't preempt nominal from CQ with 0 weight",
			cqs:      []api.ClusterQueue{fq("a", "all", "3", 1000).Obj(), fq("b", "all", "3", 0).Obj()},
			admitted: slices.Concat(units("a", "a1", "a2", "a3"), units("b", "b1", "b2", "b3")), incoming: in(0).Request(cpu, "1"), cq: "a",
		}),
		pc(kueuePreemptionCase{
			name:     "can't preempt nominal from Cohort with 0 weight",
			cqs:      []api.ClusterQueue{fqReclaim("left-cq", "root", "0", 1000).Obj(), fqReclaim("right-cq", "right-cohort", "0", 0).Obj()},
			cohorts:  []api.Cohort{fc("right-cohort", "root", "1", 0)},
			admitted: units("right-cq", "right-1"), incoming: in(0).Request(cpu, "1"), cq: "left-cq",
		}),
		pc(kueuePreemptionCase{
			name: "can preempt within cluster queue when no cohort",
			cqs: []api.ClusterQueue{gt.MakeClusterQueue("a").Preemption(api.PreemptLowerPriority, api.PreemptNever).
				ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "1").Obj()).Obj()},
			admitted: units("a", "a1"), incoming: in(1000).Request(cpu, "1"), cq: "a",
			want: map[string]VictimReason{"a1": inCQ},
		}),
		pc(kueuePreemptionCase{
			name: "hierarchical preemption",
			cqs: []api.ClusterQueue{fqReclaim("a", "LEFT", "1", 2000).Obj(), fqReclaim("b", "LEFT", "1", 1000).Obj(),
				fqReclaim("c", "ROOT", "1", 1000).Obj(), fqReclaim("d", "RIGHT", "1", 1000).Obj(), fqReclaim("e", "RIGHT", "1", 990).Obj()},
			cohorts:  []api.Cohort{hc("ROOT", "", "5"), fc("LEFT", "ROOT", "5", 2000), hc("RIGHT", "ROOT", "5")},
			admitted: slices.Concat(prio("b", 5), prio("c", 5), prio("d", 5), prio("e", 5)),
			incoming: in(0).Request(cpu, "5"), cq: "a",
			want: map[string]VictimReason{"b1": fs, "b2": fs, "c1": fs, "c2": fs, "e1": fs},
		}),
		pc(kueuePreemptionCase{
			name: "borrowing cq in non-borrowing cohort is protected",
			cqs: []api.ClusterQueue{fq("a", "ROOT", "5", 10000).Obj(), fqReclaim("b", "RIGHT", "0", 100).
				Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			cohorts:  []api.Cohort{hc("ROOT", "", ""), fc("RIGHT", "ROOT", "1", 100)},
			admitted: slices.Concat(negOne("a", "a1", "a2", "a3"), negOne("b", "b1")),
			incoming: in(0).Request(cpu, "5"), cq: "a",
			want: map[string]VictimReason{"a1": inCQ, "a2": inCQ, "a3": inCQ},
		}),
		pc(kueuePreemptionCase{
			name: "forced to preempt within clusterqueue because borrowing workload too important",
			cqs: []api.ClusterQueue{fq("a", "ROOT", "5", 10000).Preemption(api.PreemptLowerPriority, api.PreemptLowerPriority).Obj(),
				fqReclaim("b", "RIGHT", "0", 100).Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			cohorts:  []api.Cohort{hc("ROOT", "", ""), fc("RIGHT", "ROOT", "3", 100)},
			admitted: slices.Concat(negOne("a", "a1", "a2", "a3"), []kueueAdmitted{adm("b1", "b", 100, use("default", cpu, "4"))}),
			incoming: in(0).Request(cpu, "4"), cq: "a",
			want: map[string]VictimReason{"a1": inCQ, "a2": inCQ, "a3": inCQ},
		}),
		pc(kueuePreemptionCase{
			name: "deep preemption",
			cqs: []api.ClusterQueue{fqReclaim("a", "AAA", "0", 1000).Obj(),
				fqReclaim("b", "BBB", "0", 1000).Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			cohorts:  deep,
			admitted: units("b", "b1"), incoming: in(0).Request(cpu, "1"), cq: "a",
			want: map[string]VictimReason{"b1": fs},
		}),
		pc(kueuePreemptionCase{
			name: "cq with zero weight can reclaim nominal quota",
			cqs: []api.ClusterQueue{fqReclaim("a", "ROOT", "1", 0).Obj(),
				fqReclaim("b", "ROOT", "0", 1000).Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			admitted: units("b", "b1"), incoming: in(0).Request(cpu, "1"), cq: "a",
			want: map[string]VictimReason{"b1": reclaim},
		}),
		pc(kueuePreemptionCase{
			name: "cohort with zero weight can reclaim nominal quota",
			cqs: []api.ClusterQueue{fqReclaim("a", "A", "0", 0).Obj(),
				fqReclaim("b", "ROOT", "0", 1000).Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			cohorts:  []api.Cohort{fc("A", "ROOT", "1", 0)},
			admitted: units("b", "b1"), incoming: in(0).Request(cpu, "1"), cq: "a",
			want: map[string]VictimReason{"b1": fs},
		}),
		nominalFirst,
		pc(kueuePreemptionCase{
			name: "zero weight borrowing preemptor cannot preempt from a borrowing CQ with a non-zero weight",
			cqs: []api.ClusterQueue{fqReclaim("a", "all", "1", 0).Obj(),
				fqReclaim("b", "all", "1", 1000).Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			admitted: slices.Concat(units("a", "a1"), units("b", "b1", "b2")), incoming: in(0).Request(cpu, "1"), cq: "a",
		}),
		pc(kueuePreemptionCase{
			name: "zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight",
			cqs: []api.ClusterQueue{fqReclaim("a", "all", "1", 0).Obj(),
				fqReclaim("b", "all", "0", 0).Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			cohorts:  []api.Cohort{hc("all", "", "3")},
			admitted: units("b", "b1", "b2", "b3"), incoming: in(0).Request(cpu, "2"), cq: "a",
			want: map[string]VictimReason{"b1": fs},
			differs: "a share with weight 0 is infinite in Gantry and two infinite shares are equal, so neither " +
				"strategy passes; Kueue breaks the tie by the unweighted shares",
		}),
		pc(kueuePreemptionCase{
			name: "non-zero weight borrowing preemptor preempts from a borrowing CQ",
			cqs: []api.ClusterQueue{fqReclaim("a", "all", "1", 1000).Obj(),
				fqReclaim("b", "all", "0", 1000).Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			cohorts:  []api.Cohort{hc("all", "", "3")},
			admitted: units("b", "b1", "b2", "b3"), incoming: in(0).Request(cpu, "2"), cq: "a",
			want: map[string]VictimReason{"b1": fs},
		}),
		pc(kueuePreemptionCase{
			name: "candidates skipped by the first strategy are still available to the second strategy",
			cqs: []api.ClusterQueue{fqReclaim("p", "A", "2", 1000).Obj(),
				fqReclaim("y", "A", "2", 1000).Preemption(api.PreemptNever, api.PreemptNever).Obj(),
				fqReclaim("x", "ROOT", "1", 1000).Preemption(api.PreemptNever, api.PreemptNever).Obj()},
			cohorts: []api.Cohort{hc("ROOT", "", ""), fc("A", "ROOT", "1", 0)},
			admitted: slices.Concat([]kueueAdmitted{adm("p1", "p", 0, use("default", cpu, "2")), adm("y1", "y", 0, use("default", cpu, "2")),
				adm("y2", "y", 0, use("default", cpu, "2"))}, units("x", "x1", "x2")),
			incoming: in(0).Request(cpu, "1"), cq: "p",
			want: map[string]VictimReason{"y1": fs, "x1": fs},
		}),
	}
}
