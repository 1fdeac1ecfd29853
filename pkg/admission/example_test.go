package admission_test

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// One decision as the engine's cycle makes it: the workload's queue is resolved, quota
// gives a candidate assignment, (placement confirms) and the admission is recorded;
// then the explanation of a workload that has to wait.
func ExampleQuota() {
	gpus := func(n resources.Amount) resources.Vector { return resources.Vector{resources.NvidiaGPU: n} }
	objs := &api.Objects{
		Flavors: []api.ResourceFlavor{{Meta: api.Meta{Name: "h100"}}},
		ClusterQueues: []api.ClusterQueue{{
			Meta: api.Meta{Name: "research"}, QueueingStrategy: api.BestEffortFIFO,
			ResourceGroups: []api.ResourceGroup{{
				CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: "h100", Resources: []api.ResourceQuota{
					{Name: resources.NvidiaGPU, Nominal: 8}}}},
			}},
		}},
		LocalQueues: []api.LocalQueue{{Meta: api.Meta{Name: "team", Namespace: "ml"}, ClusterQueue: "research"}},
	}
	quota, err := admission.NewQuota(objs, admission.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	resolver, err := admission.NewResolver(objs)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"train", "tune"} {
		wl := &api.Workload{Meta: api.Meta{Name: name, Namespace: "ml"}, Queue: "team",
			PodSets: []api.PodSet{{Name: "workers", Count: 3, Requests: gpus(2)}}}
		r := resolver.Resolve(wl)
		if !r.OK() {
			fmt.Println(r.Code, r.Message)
			return
		}
		a := quota.Assign(wl, r.ClusterQueue)
		if !a.Fits() {
			fmt.Println(a.Code, "-", a.PodSets[0].Tried[0].Reasons[0].String())
			continue
		}
		fmt.Println(a)
		if err := quota.Admit(wl, a); err != nil { // after placement confirmed it
			fmt.Println(err)
			return
		}
	}
	// Output:
	// ml/train in research: Fit; workers: nvidia.com/gpu=6@h100
	// WaitingForQuota - needs 6 nvidia.com/gpu in flavor h100, 2 free of nominal 8, cannot borrow: not in a cohort
}
