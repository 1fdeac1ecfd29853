package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// visitOrder is the order a cycle over quota q visits ps in, by workload name.
func visitOrder(q Quota, ps []Pending) []string {
	c := &cycle{in: Input{Quota: q}, shapes: map[api.WorkloadID]string{}, quotaMemo: map[string]quotaAnswer{}}
	k := newKeyer(q, nil, ps, nil)
	k.ranks = c.headRanks()
	got, _ := visitAll(newVisits(ps, k))
	out := make([]string, 0, len(got))
	for _, p := range got {
		out = append(out, p.Workload.Name)
	}
	return out
}

// rankQuota is a quota of cpu in flavor "on-demand" (and "spot" where a queue lists it).
func rankQuota(t testing.TB, fair bool, cohorts []api.Cohort, cqs ...api.ClusterQueue) *admission.Quota {
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("on-demand").Obj(), gt.MakeFlavor("spot").Obj()).Cohorts(cohorts...).ClusterQueues(cqs...).Obj()
	q, err := admission.NewQuota(objs, admission.Options{FairSharing: admission.FairSharingConfig{Enabled: fair}})
	if err != nil {
		t.Fatalf("NewQuota: %v", err)
	}
	return q
}

// The head rank comes before priority (a workload whose quota comes from nearer goes
// first, Kueue's nominal-first), also within a BestEffortFIFO queue, where the cycle
// visits every workload; a StrictFIFO queue keeps its order, and a queue without a
// cohort ranks every workload alike.
func TestOrderHeadRankBeforePriority(t *testing.T) {
	cases := []struct {
		name     string
		cq       *gt.ClusterQueueWrapper
		strategy api.QueueingStrategy
		want     []string
	}{
		{name: "BestEffortFIFO: nominal first", cq: cqOn("q", "pool", cpu, "on-demand", "4"), strategy: api.BestEffortFIFO, want: []string{"small", "big"}},
		{name: "StrictFIFO: queue order", cq: cqOn("q", "pool", cpu, "on-demand", "4"), strategy: api.StrictFIFO, want: []string{"big", "small"}},
		{name: "no cohort: priority", cq: cqOn("q", "", cpu, "on-demand", "10"), strategy: api.BestEffortFIFO, want: []string{"big", "small"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := rankQuota(t, false, nil, tc.cq.Obj(), cqOn("lender", "pool", cpu, "on-demand", "10").Obj())
			big := pending(wl("big", 1, cpu, "6").Priority(5).Obj(), "q")     // borrows 2 past its 4
			small := pending(wl("small", 1, cpu, "2").Priority(0).Obj(), "q") // within its 4
			big.Strategy, small.Strategy = tc.strategy, tc.strategy
			if got := visitOrder(NewAdmissionQuota(q, nil), []Pending{big, small}); !slices.Equal(got, tc.want) {
				t.Fatalf("order %v, want %v", got, tc.want)
			}
		})
	}
}

// Property: a workload's place is its own, as the cycle starts: the order of any subset
// of the pending workloads is the order of them all with the others left out, over random
// cohort trees, usages, flavors and queueing strategies, with and without fair sharing.
// The scheduler hands a cycle only the workloads whose answer may have changed, and the
// decisions must be those of a cycle handed every one (TestParkingKeepsDecisionsProperty).
func TestOrderOfSubsetIsRestrictionProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		q, cqs := drawRankWorld(rt)
		var all []Pending
		for i := rapid.IntRange(2, 12).Draw(rt, "pending"); i > 0; i-- {
			cq := rapid.SampledFrom(cqs).Draw(rt, "cq")
			w := gt.MakeWorkload("ns", fmt.Sprintf("w%02d", i)).Priority(int32(rapid.IntRange(0, 2).Draw(rt, "priority"))).
				Created(time.Duration(rapid.IntRange(0, 5).Draw(rt, "created"))*time.Second).
				PodSet("one", int32(rapid.IntRange(1, 3).Draw(rt, "pods"))).Request(cpu, fmt.Sprint(rapid.IntRange(1, 6).Draw(rt, "size"))).Obj()
			p := pending(w, cq.Name)
			p.Strategy = cq.QueueingStrategy
			all = append(all, p)
		}
		keep := rapid.SliceOfN(rapid.Bool(), len(all), len(all)).Draw(rt, "keep")
		var some []Pending
		kept := map[string]bool{}
		for i, p := range all {
			if keep[i] {
				some = append(some, p)
				kept[p.Workload.Name] = true
			}
		}
		full := visitOrder(NewAdmissionQuota(q.Clone(), nil), all)
		got := visitOrder(NewAdmissionQuota(q.Clone(), nil), some)
		want := slices.DeleteFunc(slices.Clone(full), func(n string) bool { return !kept[n] })
		if !slices.Equal(got, want) {
			rt.Fatalf("subset visited %v, want %v (all: %v)", got, want, full)
		}
	})
}

// drawRankWorld is a random cohort tree of ClusterQueues over cpu in one or two flavors,
// some StrictFIFO, with random usage recorded.
func drawRankWorld(rt *rapid.T) (*admission.Quota, []api.ClusterQueue) {
	cohorts := []api.Cohort{cohortOn("root", "", cpu, "on-demand", fmt.Sprint(rapid.IntRange(0, 4).Draw(rt, "rootQuota")))}
	parents := []string{"", "root"}
	for i := rapid.IntRange(0, 2).Draw(rt, "subCohorts"); i > 0; i-- {
		name := fmt.Sprintf("sub%d", i)
		cohorts = append(cohorts, cohortOn(name, "root", cpu, "on-demand", fmt.Sprint(rapid.IntRange(0, 6).Draw(rt, "subQuota"))))
		parents = append(parents, name)
	}
	var cqs []api.ClusterQueue
	for i := rapid.IntRange(1, 4).Draw(rt, "queues"); i > 0; i-- {
		flavors := []string{"on-demand", fmt.Sprint(rapid.IntRange(0, 8).Draw(rt, "nominal"))}
		if rapid.Bool().Draw(rt, "spot") {
			flavors = append(flavors, "spot", fmt.Sprint(rapid.IntRange(0, 8).Draw(rt, "spotNominal")))
		}
		cq := cqOn(fmt.Sprintf("cq%d", i), rapid.SampledFrom(parents).Draw(rt, "cohort"), cpu, flavors...)
		if rapid.Bool().Draw(rt, "preempts") {
			cq.Preemption(api.PreemptLowerPriority, api.PreemptAny)
		}
		if rapid.Bool().Draw(rt, "strict") {
			cq.Strategy(api.StrictFIFO)
		}
		cqs = append(cqs, cq.Obj())
	}
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("on-demand").Obj(), gt.MakeFlavor("spot").Obj()).Cohorts(cohorts...).ClusterQueues(cqs...).Obj()
	q, err := admission.NewQuota(objs, admission.Options{FairSharing: admission.FairSharingConfig{Enabled: rapid.Bool().Draw(rt, "fair")}})
	if err != nil {
		rt.Fatalf("NewQuota: %v", err)
	}
	for i := rapid.IntRange(0, 6).Draw(rt, "running"); i > 0; i-- {
		cq := rapid.SampledFrom(cqs).Draw(rt, "runningCQ")
		w := gt.MakeWorkload("run", fmt.Sprintf("r%d", i)).Priority(int32(rapid.IntRange(0, 2).Draw(rt, "runningPriority"))).
			Request(cpu, fmt.Sprint(rapid.IntRange(1, 5).Draw(rt, "runningSize"))).Obj()
		if a := q.Assign(w, cq.Name); a.Fits() {
			if err := q.Admit(w, a); err != nil {
				rt.Fatalf("Admit: %v", err)
			}
		}
	}
	return q, cqs
}
