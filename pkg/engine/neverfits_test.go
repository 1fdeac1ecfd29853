package engine

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func neverFitObjects() *api.Objects {
	gpu := func(n resources.Amount) []api.ResourceQuota {
		return []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: n}}
	}
	job := func(name string, pods int32, gpus resources.Amount) api.Workload {
		return api.Workload{Meta: api.Meta{Name: name, Namespace: "ns"}, Queue: "lq",
			PodSets: []api.PodSet{{Name: "main", Count: pods, Requests: resources.Vector{resources.NvidiaGPU: gpus}}}}
	}
	return &api.Objects{
		NodePools: []api.NodePool{{Meta: api.Meta{Name: "h100"}, Count: 2, GPUModel: "H100", GPUsPerNode: 8,
			CPU: 64000, Memory: 512 << 30, NodeLabels: map[string]string{"pool": "h100"}}},
		Flavors: []api.ResourceFlavor{{Meta: api.Meta{Name: "h100"}, NodeLabels: map[string]string{"pool": "h100"}},
			{Meta: api.Meta{Name: "elsewhere"}, NodeLabels: map[string]string{"pool": "none"}}},
		ClusterQueues: []api.ClusterQueue{
			{Meta: api.Meta{Name: "cq"}, ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: "h100", Resources: gpu(100)}}}}},
			{Meta: api.Meta{Name: "other"}, ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: "elsewhere", Resources: gpu(100)}}}}},
		},
		LocalQueues: []api.LocalQueue{{Meta: api.Meta{Name: "lq", Namespace: "ns"}, ClusterQueue: "cq"},
			{Meta: api.Meta{Name: "lq", Namespace: "other"}, ClusterQueue: "other"}},
		Workloads: []api.Workload{job("nine", 1, 9), job("nine-again", 1, 9), job("eight", 1, 8), job("gang", 3, 8)},
	}
}

// TestNeverFitChecker: equal shapes in one ClusterQueue share an answer, each under its
// own name; the same shape in a ClusterQueue whose only flavor selects no node never
// fits; what fits the empty cluster is not reported.
func TestNeverFitChecker(t *testing.T) {
	objs := neverFitObjects()
	nodes, err := cluster.NodesOf(objs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewNeverFitChecker(nodes, objs)
	if err != nil {
		t.Fatal(err)
	}
	eightElsewhere := objs.Workloads[2]
	eightElsewhere.Namespace = "other"
	cases := []struct {
		w     api.Workload
		never bool
		why   string
	}{
		{objs.Workloads[0], true, "no node of the cluster can hold one pod (0 of 2 nodes)"},
		{objs.Workloads[1], true, "no node of the cluster can hold one pod (0 of 2 nodes)"},
		{objs.Workloads[2], false, ""},
		{objs.Workloads[3], true, "the gang needs 3 pods at once, the empty cluster holds 2; needs 24 nvidia.com/gpu in all, the cluster has 16"},
		{eightElsewhere, true, "no node of the cluster can hold one pod (0 of 2 nodes)"},
	}
	for _, tc := range cases {
		nf, never := c.Check(&tc.w)
		if never != tc.never || nf.Why != tc.why || (never && nf.Workload != tc.w.ID()) {
			t.Errorf("%s: never=%v %q (workload %s); want %v %q", tc.w.ID(), never, nf.Why, nf.Workload, tc.never, tc.why)
		}
	}
	if len(c.answers) != 4 {
		t.Errorf("%d answers kept, want 4 (nine and nine-again share one)", len(c.answers))
	}
	all, err := NeverFits(objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Workload != "ns/gang" || all[1].Workload != "ns/nine" || all[2].Workload != "ns/nine-again" {
		t.Errorf("NeverFits = %+v, want ns/gang, ns/nine, ns/nine-again", all)
	}
}
