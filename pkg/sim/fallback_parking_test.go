package sim

import (
	"bytes"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A gang the nodes refused under one flavor assignment can fit under another once
// admissions in its cohort tree raise the usage its flavors are chosen by (flavor
// fungibility TryNextFlavor, several flavors): parking must wake it on those
// admissions, as retrying every workload in every cycle would try it again.
func TestParkingWakesFlavorChoicesOnAdmissions(t *testing.T) {
	w := MakeWorld().Pool("spot", 2, 8, api.CapacitySpot).Pool("h100", 1, 2, api.CapacityOnDemand)
	w.o.Flavors = append(w.o.Flavors, api.ResourceFlavor{Meta: api.Meta{Name: "a100"}, NodeLabels: map[string]string{"pool": "a100"}})
	amt := func(n int64) *resources.Amount { a := resources.Amount(n); return &a }
	gpu := func(flavor string, nominal int64, borrow, lend *resources.Amount) api.FlavorQuotas {
		return api.FlavorQuotas{Name: flavor, Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: resources.Amount(nominal), BorrowingLimit: borrow, LendingLimit: lend}}}
	}
	group := func(fs ...api.FlavorQuotas) []api.ResourceGroup {
		return []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU}, Flavors: fs}}
	}
	w.o.ClusterQueues = []api.ClusterQueue{
		{Meta: api.Meta{Name: "cq1"}, Cohort: "c1", QueueingStrategy: api.BestEffortFIFO,
			ResourceGroups:    group(gpu("spot", 2, nil, amt(3)), gpu("h100", 0, amt(2), nil), gpu("a100", 9, nil, amt(0))),
			FlavorFungibility: api.FlavorFungibility{WhenCanBorrow: api.TryNextFlavor, WhenCanPreempt: api.TryNextFlavor}},
		{Meta: api.Meta{Name: "cq3"}, Cohort: "c1", QueueingStrategy: api.BestEffortFIFO,
			ResourceGroups: group(gpu("spot", 18, nil, amt(24)))},
	}
	w.o.LocalQueues = []api.LocalQueue{{Meta: api.Meta{Name: "lq", Namespace: "ns"}, ClusterQueue: "cq1"}}
	w.Job("a", 1, 1, 0, time.Hour, 0).Priority("a", 3).
		Job("b", 2, 2, 0, time.Hour, 0).Priority("b", 0).
		Job("c", 1, 1, 0, time.Hour, 0).Priority("c", 1).
		Job("d", 2, 1, time.Minute, time.Hour, 0).Priority("d", 3)
	c := &w.o.Workloads[2]
	c.PodSets = append(c.PodSets, api.PodSet{Name: "side", Count: 2, Requests: resources.Vector{resources.NvidiaGPU: 1}})
	objs := w.Obj()
	for _, cfg := range []engine.Config{{}, {Preemption: true, Grace: time.Minute}, {Reservations: true}, {Preemption: true, Reservations: true, Grace: time.Minute}} {
		_, parked := simulateWith(t, objs, cfg, false)
		_, polled := simulateWith(t, objs, cfg, true)
		if p, q := withoutRejections(parked), withoutRejections(polled); !bytes.Equal(p, q) {
			t.Errorf("%+v: event logs differ:\nparked:\n%s\npolled:\n%s", cfg, p, q)
		}
	}
}
