package admission

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// exampleGPU is the extended resource of Kueue's TestSchedule ClusterQueue eng-beta.
const exampleGPU resources.Name = "example.com/gpu"

// kueueScheduleCQs are the ClusterQueues of Kueue's TestSchedule that the cases use
// (eng-alpha, eng-beta, lend-a, lend-b, sales; StrictFIFO in Kueue, moot here with one
// head per queue). Namespace selectors are left out: the cases name the ClusterQueue.
func kueueScheduleCQs() []api.ClusterQueue {
	return []api.ClusterQueue{
		gt.MakeClusterQueue("eng-alpha").Cohort("eng").ResourceGroup(
			gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Borrow("50").Obj(),
			gt.MakeFlavorQuotas("spot").Resource(cpu, "100").Borrow("0").Obj()).Obj(),
		gt.MakeClusterQueue("eng-beta").Cohort("eng").Preemption(api.PreemptLowerPriority, api.PreemptAny).
			ResourceGroup(
				gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Borrow("10").Obj(),
				gt.MakeFlavorQuotas("spot").Resource(cpu, "0").Borrow("100").Obj()).
			ResourceGroup(gt.MakeFlavorQuotas("model-a").Resource(exampleGPU, "20").Borrow("0").Obj()).Obj(),
		gt.MakeClusterQueue("lend-a").Cohort("lend").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "3").Lend("2").Obj()).Obj(),
		gt.MakeClusterQueue("lend-b").Cohort("lend").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "2").Lend("2").Obj()).Obj(),
		// Kueue's case sets a borrowing limit 0 on sales, which has no cohort; Gantry,
		// like Kueue's own validation, refuses a borrowing limit without a cohort.
		gt.MakeClusterQueue("sales").ResourceGroup(gt.MakeFlavorQuotas("default").Resource(cpu, "50").Obj()).Obj(),
	}
}

func kueueScheduleFlavors() []api.ResourceFlavor {
	var out []api.ResourceFlavor
	for _, n := range []string{"default", "on-demand", "spot", "model-a"} {
		out = append(out, gt.MakeFlavor(n).Obj())
	}
	return out
}

// kueuePending is a workload waiting in ClusterQueue cq when the cycle starts.
type kueuePending struct {
	wl *gt.WorkloadWrapper
	cq string
}

// kueueScheduleCase is one case of Kueue's TestSchedule, a single scheduling cycle:
// the workloads admitted in it (with their flavors), the ones preempted for a pending
// workload and the pending ones left waiting.
type kueueScheduleCase struct {
	name     string // the Kueue case name, verbatim
	cqs      []api.ClusterQueue
	cohorts  []api.Cohort
	admitted []kueueAdmitted
	// pending lists the heads of the queues in the order Kueue's cycle takes them.
	pending []kueuePending
	// wantAdmitted maps each workload admitted in the cycle to its flavors (flavorsOf).
	wantAdmitted  map[string]string
	wantPreempted map[string]VictimReason
	wantLeft      []string
	opts          Options // Options{} unless the Kueue test enables fair sharing
	// differs, when set, says in one line why Gantry deliberately decides otherwise
	// than Kueue; the want fields are then Gantry's decision.
	differs string
}

func TestKueueScheduleCases(t *testing.T) {
	runKueueScheduleCases(t, slices.Concat(kueueScheduleCases(), kueuePreferenceCases(), kueuePartialCases()))
}

// runKueueScheduleCases runs each case as one cycle over the quota layer.
func runKueueScheduleCases(t *testing.T, cases []kueueScheduleCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := gt.MakeObjects().Flavors(kueueScheduleFlavors()...).
				ClusterQueues(append(kueueScheduleCQs(), tc.cqs...)...).Cohorts(tc.cohorts...).Obj()
			q, err := NewQuota(objs, tc.opts)
			if err != nil {
				t.Fatalf("NewQuota: %v", err)
			}
			admitAll(t, q, tc.admitted)
			got := runKueueCycle(t, q, tc.pending)
			want := kueueCycle{admitted: tc.wantAdmitted, preempted: tc.wantPreempted, left: tc.wantLeft}
			if msg := got.diff(want); msg != "" {
				if tc.differs != "" {
					msg = "Gantry (differs from Kueue: " + tc.differs + "): " + msg
				}
				t.Fatal(msg)
			}
		})
	}
}

// kueueCycle is what one cycle did.
type kueueCycle struct {
	admitted  map[string]string
	preempted map[string]VictimReason
	left      []string
}

// runKueueCycle does what one Kueue scheduling cycle does with the queue heads: each is
// rated against the usage left by those before it (AssignPartial: with fewer pods when
// its pod sets allow it and the full counts neither fit nor find victims); one that
// fits is admitted, one that needs preemption gets its victims chosen (Kueue admits it
// in a later cycle, once they are gone) and one that does not fit stays pending. Victims
// already chosen in this cycle are not offered to a later head (Kueue skips overlapping
// preemptions).
func runKueueCycle(t *testing.T, q *Quota, pending []kueuePending) kueueCycle {
	t.Helper()
	out := kueueCycle{admitted: map[string]string{}, preempted: map[string]VictimReason{}}
	taken := map[api.WorkloadID]bool{}
	for _, p := range pending {
		wl := p.wl.Obj()
		pr := q.AssignPartial(wl, p.cq, func(id api.WorkloadID) bool { return taken[id] })
		a := pr.Assignment
		if a.Fits() {
			if err := q.Admit(pr.Workload, a); err != nil {
				t.Fatalf("admit %s: %v", wl.ID(), err)
			}
			out.admitted[wl.Name] = flavorsOf(a)
			continue
		}
		out.left = append(out.left, wl.Name)
		if a.Mode != Preempt {
			continue
		}
		res := pr.Victims
		for name, r := range victimNames(res) {
			out.preempted[name] = r
		}
		for _, v := range res.Victims {
			taken[v.Workload] = true
		}
	}
	sort.Strings(out.left)
	return out
}

// diff describes how c differs from want ("" when it does not).
func (c kueueCycle) diff(want kueueCycle) string {
	var b strings.Builder
	if !maps.Equal(c.admitted, want.admitted) {
		b.WriteString("admitted differ; ")
	}
	if !sameVictims(c.preempted, want.preempted) {
		b.WriteString("preempted differ; ")
	}
	wl := append([]string(nil), want.left...)
	sort.Strings(wl)
	if !slices.Equal(c.left, wl) {
		b.WriteString("left differ; ")
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + "got admitted " + fmtMap(c.admitted) + " preempted " + strings.Join(sortedNames(c.preempted), ",") +
		" left " + strings.Join(c.left, ",") + "; Kueue admits " + fmtMap(want.admitted) +
		" preempts " + strings.Join(sortedNames(want.preempted), ",") + " leaves " + strings.Join(wl, ",")
}

func fmtMap(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// flavorsOf renders an assignment's flavors: "one:cpu@on-demand,example.com/gpu@model-a two:cpu@spot",
// with the admitted count of a partial admission: "one:cpu@default×25".
func flavorsOf(a Assignment) string {
	var parts []string
	for _, ps := range a.PodSets {
		var rs []string
		for _, r := range ps.Resources {
			rs = append(rs, string(r.Resource)+"@"+r.Flavor)
		}
		part := ps.Name + ":" + strings.Join(rs, ",")
		if a.Partial() {
			part += "×" + strconv.Itoa(int(ps.Count))
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " ")
}

func kueueScheduleCases() []kueueScheduleCase {
	od := func(q string) FlavorAmount { return use("on-demand", cpu, q) }
	never, lower := api.PreemptNever, api.PreemptLowerPriority
	return []kueueScheduleCase{
		{
			name:     "single clusterQueue full",
			admitted: []kueueAdmitted{adm("assigned", "sales", 0, use("default", cpu, "40"))},
			pending:  []kueuePending{{gt.MakeWorkload("sales", "new").PodSet("one", 11).Request(cpu, "1"), "sales"}},
			wantLeft: []string{"new"},
		},
		{
			name: "admit in same cohort with no borrowing",
			pending: []kueuePending{
				{gt.MakeWorkload("eng-alpha", "new-alpha").PodSet("one", 40).Request(cpu, "1"), "eng-alpha"},
				{gt.MakeWorkload("eng-beta", "new-beta").PodSet("one", 40).Request(cpu, "1"), "eng-beta"},
			},
			wantAdmitted: map[string]string{"new-alpha": "one:cpu@on-demand", "new-beta": "one:cpu@on-demand"},
		},
		{
			name: "assign multiple resources and flavors",
			pending: []kueuePending{{gt.MakeWorkload("eng-beta", "new").PodSet("one", 10).Request(cpu, "6").Request(exampleGPU, "1").
				PodSet("two", 40).Request(cpu, "1"), "eng-beta"}},
			wantAdmitted: map[string]string{"new": "one:cpu@on-demand,example.com/gpu@model-a two:cpu@spot"},
		},
		{
			name:     "workload exceeds lending limit when borrow in cohort",
			admitted: []kueueAdmitted{adm("a", "lend-b", 0, use("default", cpu, "2"))},
			pending:  []kueuePending{{gt.MakeWorkload("lend", "b").Request(cpu, "3"), "lend-b"}},
			wantLeft: []string{"b"},
		},
		{
			name:     "hierarchical cohort respects lending limit when borrowing",
			cqs:      lenderBorrower("3"),
			cohorts:  []api.Cohort{gt.MakeCohort("root").Obj(), gt.MakeCohort("child").Parent("root").Obj()},
			admitted: []kueueAdmitted{adm("wl-existing", "cq-borrower", 0, od("5"))},
			pending:  []kueuePending{{gt.MakeWorkload("eng-alpha", "wl-pending").Request(cpu, "4"), "cq-borrower"}},
			wantLeft: []string{"wl-pending"},
		},
		{
			name:         "hierarchical cohort allows borrowing up to lending limit",
			cqs:          lenderBorrower("5"),
			cohorts:      []api.Cohort{gt.MakeCohort("root").Obj(), gt.MakeCohort("child").Parent("root").Obj()},
			admitted:     []kueueAdmitted{adm("wl-existing", "cq-borrower", 0, od("5"))},
			pending:      []kueuePending{{gt.MakeWorkload("eng-alpha", "wl-borrowing").Request(cpu, "5"), "cq-borrower"}},
			wantAdmitted: map[string]string{"wl-borrowing": "main:cpu@on-demand"},
		},
		{
			name: "preempt workloads in ClusterQueue and cohort",
			admitted: []kueueAdmitted{adm("use-all-spot", "eng-alpha", 0, use("spot", cpu, "100")),
				adm("low-1", "eng-beta", -1, od("30")), adm("low-2", "eng-beta", -2, od("10")), adm("borrower", "eng-alpha", 0, od("60"))},
			pending:       []kueuePending{{gt.MakeWorkload("eng-beta", "preemptor").Request(cpu, "20"), "eng-beta"}},
			wantPreempted: map[string]VictimReason{"borrower": InCohortReclamation, "low-2": InClusterQueue},
			wantLeft:      []string{"preemptor"},
		},
		{
			name:     "cannot borrow resource not listed in clusterQueue",
			pending:  []kueuePending{{gt.MakeWorkload("eng-alpha", "new").Request(exampleGPU, "1"), "eng-alpha"}},
			wantLeft: []string{"new"},
		},
		{
			name:         "not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor",
			admitted:     []kueueAdmitted{adm("existing", "eng-beta", 0, od("45"))},
			pending:      []kueuePending{{gt.MakeWorkload("eng-alpha", "new").PodSet("one", 60).Request(cpu, "1"), "eng-alpha"}},
			wantAdmitted: map[string]string{"new": "one:cpu@spot"},
		},
		{
			name: "admit to second flavor when first needs preemption; WhenCanPreempt: TryNextFlavor",
			cqs: []api.ClusterQueue{gt.MakeClusterQueue("preempt-attempts-cq").Preemption(lower, never).
				Fungibility(api.MayStopSearch, api.TryNextFlavor).ResourceGroup(
				gt.MakeFlavorQuotas("on-demand").Resource(cpu, "1").Obj(),
				gt.MakeFlavorQuotas("spot").Resource(cpu, "1").Obj()).Obj()},
			admitted:     []kueueAdmitted{adm("blocker", "preempt-attempts-cq", 50, od("1"))},
			pending:      []kueuePending{{gt.MakeWorkload("eng-alpha", "test-wl").Priority(100).Request(cpu, "1"), "preempt-attempts-cq"}},
			wantAdmitted: map[string]string{"test-wl": "main:cpu@spot"},
		},
		{
			name: "two workloads can borrow different resources from the same flavor in the same cycle",
			cqs:  threeR1R2(),
			pending: []kueuePending{
				{gt.MakeWorkload("sales", "wl1").Priority(-1).Request(r1, "16"), "cq1"},
				{gt.MakeWorkload("sales", "wl2").Priority(-2).Request(r2, "16"), "cq2"},
			},
			wantAdmitted: map[string]string{"wl1": "main:r1@default", "wl2": "main:r2@default"},
		},
		{
			name: "two workloads can borrow the same resources from the same flavor in the same cycle if fits in the cohort quota",
			cqs:  threeR1R2(),
			pending: []kueuePending{
				{gt.MakeWorkload("sales", "wl1").Priority(-1).Request(r1, "16"), "cq1"},
				{gt.MakeWorkload("sales", "wl2").Priority(-2).Request(r1, "14"), "cq2"},
			},
			wantAdmitted: map[string]string{"wl1": "main:r1@default", "wl2": "main:r1@default"},
		},
		{
			name: "only one workload can borrow one resources from the same flavor in the same cycle if cohort quota cannot fit",
			cqs:  threeR1R2(),
			pending: []kueuePending{
				{gt.MakeWorkload("sales", "wl1").Priority(-1).Request(r1, "16"), "cq1"},
				{gt.MakeWorkload("sales", "wl2").Priority(-2).Request(r1, "16"), "cq2"},
			},
			wantAdmitted: map[string]string{"wl1": "main:r1@default"},
			wantLeft:     []string{"wl2"},
		},
		{
			name: "prefer first preemption flavor when second flavor requires both reclaim and cq priority preemption",
			cqs:  otherAlphaBeta(),
			admitted: []kueueAdmitted{adm("a1", "other-alpha", 50, use("on-demand", gpuR, "5")), adm("a2", "other-alpha", 50, use("spot", gpuR, "5")),
				adm("b1", "other-beta", 50, use("spot", gpuR, "5"))},
			pending:       []kueuePending{{gt.MakeWorkload("eng-alpha", "preemptor").Priority(100).Request(gpuR, "6"), "other-alpha"}},
			wantPreempted: map[string]VictimReason{"a1": InClusterQueue},
			wantLeft:      []string{"preemptor"},
		},
		{
			name: "prefer first preemption flavor when second flavor also requires cq preemption",
			cqs:  otherAlphaBeta(),
			admitted: []kueueAdmitted{adm("a1", "other-alpha", 50, use("on-demand", gpuR, "6")), adm("a2", "other-alpha", 50, use("spot", gpuR, "5")),
				adm("b1", "other-beta", 9001, use("spot", gpuR, "5"))},
			pending:       []kueuePending{{gt.MakeWorkload("eng-alpha", "preemptor").Priority(100).Request(gpuR, "5"), "other-alpha"}},
			wantPreempted: map[string]VictimReason{"a1": InClusterQueue},
			wantLeft:      []string{"preemptor"},
		},
		{
			// Kueue's case sets a borrowing limit on other-alpha, which has no cohort;
			// Gantry refuses it (as Kueue's validation does) and it changes nothing here.
			name: "use second flavor when the first has no preemption candidates; WhenCanPreempt: MayStopSearch",
			cqs: []api.ClusterQueue{gt.MakeClusterQueue("other-alpha").Preemption(lower, never).
				Fungibility(api.MayStopSearch, api.MayStopSearch).ResourceGroup(
				gt.MakeFlavorQuotas("on-demand").Resource(cpu, "50").Obj(),
				gt.MakeFlavorQuotas("spot").Resource(cpu, "100").Obj()).Obj()},
			admitted:     []kueueAdmitted{adm("admitted", "other-alpha", 0, od("50"))},
			pending:      []kueuePending{{gt.MakeWorkload("eng-alpha", "new").Request(cpu, "20"), "other-alpha"}},
			wantAdmitted: map[string]string{"new": "main:cpu@spot"},
		},
		{
			name: "prefer reclamation over cq priority based preemption",
			cqs:  otherAlphaBetaPreempting(),
			admitted: []kueueAdmitted{adm("a1", "other-alpha", 50, use("on-demand", gpuR, "5")),
				adm("b1", "other-beta", 50, use("spot", gpuR, "5"))},
			pending:       []kueuePending{{gt.MakeWorkload("eng-alpha", "preemptor").Priority(100).Request(gpuR, "6"), "other-alpha"}},
			wantPreempted: map[string]VictimReason{"b1": InCohortReclamation},
			wantLeft:      []string{"preemptor"},
		},
		{
			name: "don't assign flavor if there are no candidates for preemption",
			cqs: []api.ClusterQueue{
				gt.MakeClusterQueue("cq1").Cohort("cohort").Preemption(lower, api.PreemptAny).BorrowWithinCohort(lower, nil).
					Fungibility(api.MayStopSearch, api.MayStopSearch).ResourceGroup(
					gt.MakeFlavorQuotas("on-demand").Resource(cpu, "0").Borrow("1").Obj(),
					gt.MakeFlavorQuotas("spot").Resource(cpu, "0").Borrow("1").Obj()).Obj(),
				gt.MakeClusterQueue("cq2").Cohort("cohort").ResourceGroup(
					gt.MakeFlavorQuotas("on-demand").Resource(cpu, "1").Obj(),
					gt.MakeFlavorQuotas("spot").Resource(cpu, "1").Obj()).Obj(),
			},
			admitted:     []kueueAdmitted{adm("admitted", "cq2", 0, od("1"))},
			pending:      []kueuePending{{gt.MakeWorkload("eng-alpha", "new").Priority(100).Request(cpu, "1"), "cq1"}},
			wantAdmitted: map[string]string{"new": "main:cpu@spot"},
		},
	}
}

// Resources of the Kueue cases that use plain names.
const (
	r1   resources.Name = "r1"
	r2   resources.Name = "r2"
	gpuR resources.Name = "gpu"
)

// threeR1R2 are cq1..cq3 of cohort "co", each with r1 and r2 of nominal 10 and
// borrowing limit 10 in flavor default.
func threeR1R2() []api.ClusterQueue {
	var out []api.ClusterQueue
	for _, n := range []string{"cq1", "cq2", "cq3"} {
		out = append(out, gt.MakeClusterQueue(n).Cohort("co").Preemption(api.PreemptLowerPriority, api.PreemptAny).
			ResourceGroup(gt.MakeFlavorQuotas("default").Resource(r1, "10").Borrow("10").Resource(r2, "10").Borrow("10").Obj()).Obj())
	}
	return out
}

// otherAlphaBeta are other-alpha (10 gpu in on-demand and in spot, preempting
// LowerPriority within and in the cohort) and other-beta (0 gpu in each) of cohort
// "other".
func otherAlphaBeta() []api.ClusterQueue {
	quotas := func(nominal string) []api.FlavorQuotas {
		return []api.FlavorQuotas{gt.MakeFlavorQuotas("on-demand").Resource(gpuR, nominal).Obj(),
			gt.MakeFlavorQuotas("spot").Resource(gpuR, nominal).Obj()}
	}
	return []api.ClusterQueue{
		gt.MakeClusterQueue("other-alpha").Cohort("other").Preemption(api.PreemptLowerPriority, api.PreemptLowerPriority).
			ResourceGroup(quotas("10")...).Obj(),
		gt.MakeClusterQueue("other-beta").Cohort("other").ResourceGroup(quotas("0")...).Obj(),
	}
}

// otherAlphaBetaPreempting is otherAlphaBeta with other-beta preempting LowerPriority
// within and in the cohort too (Kueue's "prefer reclamation" case).
func otherAlphaBetaPreempting() []api.ClusterQueue {
	cqs := otherAlphaBeta()
	cqs[1].Preemption = cqs[0].Preemption
	return cqs
}

// lenderBorrower are the ClusterQueues of Kueue's "hierarchical cohort ... lending limit"
// cases: cq-lender (10, lending limit lend) and cq-borrower (5, borrowing limit 10)
// under cohort child, itself under root.
func lenderBorrower(lend string) []api.ClusterQueue {
	return []api.ClusterQueue{
		gt.MakeClusterQueue("cq-lender").Cohort("child").ResourceGroup(gt.MakeFlavorQuotas("on-demand").Resource(cpu, "10").Lend(lend).Obj()).Obj(),
		gt.MakeClusterQueue("cq-borrower").Cohort("child").ResourceGroup(gt.MakeFlavorQuotas("on-demand").Resource(cpu, "5").Borrow("10").Obj()).Obj(),
	}
}

// kueuePartialCases are TestSchedule's "partial admission ..." cases: a pod set with a
// minimum count (MinCount) admitted with the largest count that fits when its full
// count does not, every reducible pod set reduced in proportion.
func kueuePartialCases() []kueueScheduleCase {
	oldTen := adm("old", "eng-beta", -4, use("model-a", exampleGPU, "10"))
	return []kueueScheduleCase{
		{
			name:         "partial admission single variable pod set",
			pending:      []kueuePending{{gt.MakeWorkload("sales", "new").PodSet("one", 50).MinCount(20).Request(cpu, "2"), "sales"}},
			wantAdmitted: map[string]string{"new": "one:cpu@default×25"},
		},
		{
			// 20 pods need 10 more GPUs than are free: preempting "old" frees them, so the
			// full count is kept and nothing is reduced.
			name:          "partial admission single variable pod set, preempt first",
			admitted:      []kueueAdmitted{oldTen},
			pending:       []kueuePending{{gt.MakeWorkload("eng-beta", "new").Priority(4).PodSet("one", 20).MinCount(10).Request(exampleGPU, "1"), "eng-beta"}},
			wantPreempted: map[string]VictimReason{"old": InClusterQueue},
			wantLeft:      []string{"new"},
		},
		{
			// 30 pods exceed the 20 GPUs of eng-beta; reduced to 20, they fit once "old"
			// is preempted, which beats 10 pods admitted without preemption.
			name:          "partial admission single variable pod set, preempt with partial admission",
			admitted:      []kueueAdmitted{oldTen},
			pending:       []kueuePending{{gt.MakeWorkload("eng-beta", "new").Priority(4).PodSet("one", 30).MinCount(10).Request(exampleGPU, "1"), "eng-beta"}},
			wantPreempted: map[string]VictimReason{"old": InClusterQueue},
			wantLeft:      []string{"new"},
		},
		{
			name: "partial admission multiple variable pod sets",
			pending: []kueuePending{{gt.MakeWorkload("sales", "new").PodSet("one", 20).Request(cpu, "1").
				PodSet("two", 30).MinCount(10).Request(cpu, "1").PodSet("three", 15).MinCount(5).Request(cpu, "1"), "sales"}},
			wantAdmitted: map[string]string{"new": "one:cpu@default×20 two:cpu@default×20 three:cpu@default×10"},
		},
		{
			name: "partial admission disabled, multiple variable pod sets",
			differs: "Gantry has no PartialAdmission feature gate (Kueue's is on by default); a workload opts out " +
				"by stating no minCount, so this one is admitted reduced as in the case above where Kueue leaves it pending",
			pending: []kueuePending{{gt.MakeWorkload("sales", "new").PodSet("one", 20).Request(cpu, "1").
				PodSet("two", 30).MinCount(10).Request(cpu, "1").PodSet("three", 15).MinCount(5).Request(cpu, "1"), "sales"}},
			wantAdmitted: map[string]string{"new": "one:cpu@default×20 two:cpu@default×20 three:cpu@default×10"},
		},
	}
}
