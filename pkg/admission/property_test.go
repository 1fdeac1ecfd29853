package admission

import (
	"fmt"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// world is a random cohort tree of one flavor and one resource, with its workloads.
type world struct {
	m    *admitter
	objs *api.Objects // what m was built from
	opts Options
	cqs  []string
	wls  map[api.WorkloadID]*api.Workload
	n    int
}

var policies = []api.PreemptionPolicy{api.PreemptNever, api.PreemptLowerPriority, api.PreemptLowerOrNewerEqualPriority}
var reclaims = []api.PreemptionPolicy{api.PreemptNever, api.PreemptLowerPriority, api.PreemptAny}

func genWorld(t *rapid.T) *world {
	optional := func(label string, hi int) *string {
		if !rapid.Bool().Draw(t, label+"?") {
			return nil
		}
		s := fmt.Sprint(rapid.IntRange(0, hi).Draw(t, label))
		return &s
	}
	subs := rapid.IntRange(0, 2).Draw(t, "subCohorts")
	parents := []string{"", "root"}
	cohorts := []api.Cohort{gt.MakeCohort("root").Obj()}
	for i := 0; i < subs; i++ {
		name := fmt.Sprintf("sub%d", i)
		c := gt.MakeCohort(name).Parent("root")
		fq := gt.MakeFlavorQuotas("f").Resource(gpu, fmt.Sprint(rapid.IntRange(0, 4).Draw(t, "subNominal")))
		if l := optional("subLend", 6); l != nil {
			fq.Lend(*l)
		}
		cohorts = append(cohorts, c.ResourceGroup(fq.Obj()).Obj())
		parents = append(parents, name)
	}
	var cqs []api.ClusterQueue
	n := rapid.IntRange(2, 5).Draw(t, "clusterQueues")
	for i := 0; i < n; i++ {
		cohort := rapid.SampledFrom(parents).Draw(t, "cohort")
		fq := gt.MakeFlavorQuotas("f").Resource(gpu, fmt.Sprint(rapid.IntRange(0, 10).Draw(t, "nominal")))
		if cohort != "" {
			if b := optional("borrow", 6); b != nil {
				fq.Borrow(*b)
			}
		}
		if l := optional("lend", 10); l != nil {
			fq.Lend(*l)
		}
		cq := gt.MakeClusterQueue(fmt.Sprintf("cq%d", i)).Cohort(cohort).
			Preemption(rapid.SampledFrom(policies).Draw(t, "within"), rapid.SampledFrom(reclaims).Draw(t, "reclaim")).
			Weight(int64(rapid.IntRange(0, 3).Draw(t, "weight")) * 1000).ResourceGroup(fq.Obj()) // weight 0 included
		if rapid.Bool().Draw(t, "borrowWithinCohort") {
			th := int32(rapid.IntRange(0, 3).Draw(t, "threshold"))
			cq.BorrowWithinCohort(api.PreemptLowerPriority, &th)
		}
		cqs = append(cqs, cq.Obj())
	}
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("f").Obj()).Cohorts(cohorts...).ClusterQueues(cqs...).Obj()
	opts := Options{FairSharing: FairSharingConfig{Enabled: rapid.Bool().Draw(t, "fairSharing")}}
	w := &world{m: newAdmitter(t, objs, opts), wls: map[api.WorkloadID]*api.Workload{}, objs: objs, opts: opts}
	for _, cq := range cqs {
		w.cqs = append(w.cqs, cq.Name)
	}
	return w
}

// submit queues a random workload and admits it, preempting if needed.
func (w *world) submit(t *rapid.T) (*api.Workload, []api.WorkloadID) {
	cq := rapid.SampledFrom(w.cqs).Draw(t, "cq")
	w.n++
	wl := gt.MakeWorkload("ns-"+cq, fmt.Sprintf("w%d", w.n)).Priority(int32(rapid.IntRange(0, 3).Draw(t, "priority"))).
		Created(time.Duration(rapid.IntRange(0, 5).Draw(t, "created"))*time.Second).Request(gpu, fmt.Sprint(rapid.IntRange(1, 8).Draw(t, "size"))).Obj()
	w.wls[wl.ID()] = wl
	return wl, w.admit(t, wl)
}

func (w *world) admit(t *rapid.T, wl *api.Workload) []api.WorkloadID {
	a := w.m.assign(wl)
	switch {
	case a.Fits():
		if err := w.m.Admit(wl, a); err != nil {
			t.Fatalf("Admit after a fitting Assign: %v", err)
		}
		return nil
	case a.Mode == NoFit:
		if res := w.m.FindVictims(wl, a, nil); len(res.Victims) > 0 {
			t.Fatalf("victims %v for a workload that cannot fit (%s)", victimIDs(res), a.Code)
		}
		return nil
	}
	res := w.m.FindVictims(wl, a, nil)
	if len(res.Victims) == 0 {
		return nil
	}
	// Valid only if the preemptor fits once the victims are gone: check on a clone first.
	what := w.m.Quota.Clone()
	for _, v := range res.Victims {
		if err := what.Release(v.Workload); err != nil {
			t.Fatalf("victim %s: %v", v.Workload, err)
		}
	}
	if after := what.Assign(wl, a.ClusterQueue); !after.Fits() {
		t.Fatalf("victims %v do not make room: %s", victimIDs(res), after.Message)
	}
	for _, v := range res.Victims {
		if err := w.m.Release(v.Workload); err != nil {
			t.Fatal(err)
		}
	}
	a = w.m.assign(wl)
	if err := w.m.Admit(wl, a); err != nil {
		t.Fatalf("Admit after preemption: %v", err)
	}
	return victimIDs(res)
}

// checkInvariants: no queue above nominal + borrowing limit or above what it could ever
// get, no cohort lending more than it has, usage = sum of the admitted workloads.
func (w *world) checkInvariants(t *rapid.T) {
	q := w.m.Quota
	sum := map[string]resources.Amount{}
	for _, a := range q.AdmittedWorkloads() {
		for _, u := range a.Usage {
			sum[a.ClusterQueue] += u.Amount
		}
	}
	s := q.s
	f := s.frIndex[FlavorResource{"f", gpu}]
	for n := range s.nodes {
		id := nodeID(n)
		i := s.idx(id, f)
		if s.nodes[n].isCQ {
			name := s.nodes[n].name
			if got := q.Usage(name, "f", gpu); got != sum[name] {
				t.Fatalf("%s usage %d, admitted workloads sum to %d", name, got, sum[name])
			}
			if bl := s.borrowLimit[i]; bl != noLimit && q.usage[i] > s.nominal[i]+bl {
				t.Fatalf("%s uses %d > nominal %d + borrowing limit %d", name, q.usage[i], s.nominal[i], bl)
			}
			if q.usage[i] > q.potential(id, f) {
				t.Fatalf("%s uses %d, more than it could ever get (%d)", name, q.usage[i], q.potential(id, f))
			}
		}
		if s.nodes[n].parent == noNode && q.usage[i] > s.subtree[i] {
			t.Fatalf("%s: usage %d exceeds its quota %d", s.kindName(id), q.usage[i], s.subtree[i])
		}
		if q.available(id, f) < 0 {
			t.Fatalf("%s: available %d < 0", s.kindName(id), q.available(id, f))
		}
	}
}

func TestPropertyQuotaInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			adm := w.m.Quota.AdmittedWorkloads()
			if len(adm) > 0 && rapid.IntRange(0, 3).Draw(t, "op") == 0 {
				v := rapid.SampledFrom(adm).Draw(t, "finish")
				if err := w.m.Release(v.ID); err != nil {
					t.Fatal(err)
				}
			} else {
				w.submit(t)
			}
			w.checkInvariants(t)
		}
	})
}

// TestNoPreemptionCycles: when p preempts v, v submitted again right away must not be
// able to preempt p.
func TestNoPreemptionCycles(t *testing.T) {
	preemptions, backTries := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		steps := rapid.IntRange(1, 30).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			p, victims := w.submit(t)
			preemptions += len(victims)
			for _, vid := range victims {
				v := *w.wls[vid]
				a := w.m.assign(&v)
				if a.Mode != Preempt {
					continue
				}
				backTries++
				for _, back := range victimIDs(w.m.FindVictims(&v, a, nil)) {
					if back == p.ID() {
						t.Fatalf("cycle: %s preempted %s, which could preempt it back", p.ID(), vid)
					}
				}
			}
		}
	})
	// The property must not hold vacuously: preemptions and attempts to preempt back happen.
	if preemptions == 0 || backTries == 0 {
		t.Fatalf("generator produced %d preemptions and %d preempt-back attempts; want some of each", preemptions, backTries)
	}
	t.Logf("%d preemptions, %d preempt-back attempts", preemptions, backTries)
}
