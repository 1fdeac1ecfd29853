package admission_test

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A cycle as the engine runs it: heads, a candidate assignment, (placement confirms),
// admission; then the explanation of a workload that has to wait.
func ExampleManager() {
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
	m, err := admission.NewManager(objs, admission.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"train", "tune"} {
		wl := &api.Workload{Meta: api.Meta{Name: name, Namespace: "ml"}, Queue: "team",
			PodSets: []api.PodSet{{Name: "workers", Count: 3, Requests: gpus(2)}}}
		if _, err := m.Add(wl); err != nil {
			fmt.Println(err)
			return
		}
	}
	head := m.Heads()[0]
	a := m.Assign(head.Workload)
	fmt.Println(a)
	if err := m.Admit(head.Workload, a); err != nil { // after placement confirmed it
		fmt.Println(err)
		return
	}
	next := m.Heads()[0]
	b := m.Assign(next.Workload)
	fmt.Println(b.Code, "-", b.PodSets[0].Tried[0].Reasons[0])
	// Output:
	// ml/train in research: Fit; workers: nvidia.com/gpu=6@h100
	// WaitingForQuota - needs 6 nvidia.com/gpu in flavor h100, 2 free of nominal 8, cannot borrow: not in a cohort
}
