package admission

import (
	"fmt"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// TestPropertyDeterminism: two quota trees built from the same objects and fed the same
// workloads make identical decisions (assignments, victims), although maps inside are
// iterated in random order.
func TestPropertyDeterminism(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		twin := newAdmitter(t, w.objs, w.opts)
		for step := rapid.IntRange(1, 25).Draw(t, "steps"); step > 0; step-- {
			cq := rapid.SampledFrom(w.cqs).Draw(t, "cq")
			wl := gt.MakeWorkload("ns-"+cq, fmt.Sprintf("w%d", step)).Priority(int32(rapid.IntRange(0, 3).Draw(t, "priority"))).
				Request(gpu, fmt.Sprint(rapid.IntRange(1, 8).Draw(t, "size"))).Obj()
			var got [2]string
			for i, m := range []*admitter{w.m, twin} {
				a := m.assign(wl)
				res := m.FindVictims(wl, a, nil)
				got[i] = fmt.Sprintf("%s|%v|%v", a, a.PodSets[0].Tried, victimIDs(res))
				for _, v := range res.Victims {
					if err := m.Release(v.Workload); err != nil {
						t.Fatal(err)
					}
				}
				if a = m.assign(wl); a.Fits() {
					if err := m.Admit(wl, a); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got[0] != got[1] {
				t.Fatalf("decisions differ:\n%s\n%s", got[0], got[1])
			}
		}
	})
}

// TestPropertyBadInputNeverPanics: arbitrary (often invalid) objects give an error or a
// quota tree and resolver, and any workload then gets an assignment with a reason;
// nothing panics.
func TestPropertyBadInputNeverPanics(t *testing.T) {
	names := []string{"", "a", "b", "c"}
	amount := func(t *rapid.T, label string) resources.Amount {
		return resources.Amount(rapid.IntRange(-2, 10).Draw(t, label))
	}
	rejected, built := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		objs := &api.Objects{Flavors: []api.ResourceFlavor{gt.MakeFlavor("f").Obj()}}
		for i := rapid.IntRange(0, 3).Draw(t, "cohorts"); i > 0; i-- {
			objs.Cohorts = append(objs.Cohorts, api.Cohort{Meta: api.Meta{Name: rapid.SampledFrom(names).Draw(t, "cohort")},
				Parent: rapid.SampledFrom(names).Draw(t, "parent"), FairSharing: api.FairSharing{WeightMilli: int64(amount(t, "cw"))}})
		}
		for i := rapid.IntRange(0, 3).Draw(t, "cqs"); i > 0; i-- {
			rq := api.ResourceQuota{Name: rapid.SampledFrom([]resources.Name{gpu, resources.GPUMilli, "cpu"}).Draw(t, "res"), Nominal: amount(t, "nominal")}
			if rapid.Bool().Draw(t, "bl?") {
				bl := amount(t, "bl")
				rq.BorrowingLimit = &bl
			}
			if rapid.Bool().Draw(t, "ll?") {
				ll := amount(t, "ll")
				rq.LendingLimit = &ll
			}
			fq := api.FlavorQuotas{Name: rapid.SampledFrom([]string{"f", "ghost"}).Draw(t, "flavor"), Resources: []api.ResourceQuota{rq}}
			cq := api.ClusterQueue{Meta: api.Meta{Name: rapid.SampledFrom(names).Draw(t, "cq")}, Cohort: rapid.SampledFrom(names).Draw(t, "cqCohort"),
				ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{rq.Name}, Flavors: []api.FlavorQuotas{fq}}}}
			cq.Preemption.WithinClusterQueue = api.PreemptLowerPriority
			objs.ClusterQueues = append(objs.ClusterQueues, cq)
			objs.LocalQueues = append(objs.LocalQueues, gt.MakeLocalQueue("ns", cq.Name, cq.Name).Obj())
		}
		q, err := NewQuota(objs, Options{FairSharing: FairSharingConfig{Enabled: rapid.Bool().Draw(t, "fair")}})
		var r *Resolver
		if err == nil {
			r, err = NewResolver(objs)
		}
		if err != nil {
			rejected++
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		built++
		wl := &api.Workload{Meta: api.Meta{Name: "w", Namespace: "ns"}, Queue: rapid.SampledFrom(names).Draw(t, "queue")}
		for i := rapid.IntRange(0, 2).Draw(t, "podSets"); i > 0; i-- {
			wl.PodSets = append(wl.PodSets, api.PodSet{Name: "p", Count: int32(rapid.IntRange(-1, 3).Draw(t, "count")),
				Requests: resources.Vector{rapid.SampledFrom([]resources.Name{gpu, resources.GPUMilli, resources.MIGResource("1g.10gb"), "cpu"}).Draw(t, "req"): amount(t, "amt")}})
		}
		m := &admitter{Quota: q, res: r}
		a := m.assign(wl)
		if !a.Fits() && a.Code == ReasonNone && a.Mode != Preempt {
			t.Fatalf("refusal without a reason code: %+v", a)
		}
		m.FindVictims(wl, a, nil)
		if a.Fits() {
			if err := m.Admit(wl, a); err != nil {
				t.Fatalf("Admit after a fitting Assign: %v", err)
			}
		}
	})
	if rejected == 0 || built == 0 {
		t.Fatalf("generator: %d rejected, %d built; want both kinds of input", rejected, built)
	}
}
