package controller

import (
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// pendingGPUs is one pending workload whose pods each ask for gpus whole GPUs.
func pendingGPUs(t *testing.T, gpus string) engine.Pending {
	t.Helper()
	v, err := resources.Parse("nvidia.com/gpu", gpus)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Pending{Workload: &api.Workload{PodSets: []api.PodSet{{Name: "main", Count: 1,
		Requests: resources.Vector{"nvidia.com/gpu": v}}}}}
}

// TestCountGPUUnits: allocated/free units per pool and mode over the healthy GPUs,
// stranded units per pool (free units on nodes where no pending shape fits), and GPUs
// per node by health.
func TestCountGPUUnits(t *testing.T) {
	cases := []struct {
		name         string
		unhealthy    []int // GPU indices the node agent reported
		pending      []engine.Pending
		wantFree     resources.MilliGPU
		wantStranded resources.MilliGPU // free units no pending shape can use
		wantHealthy  int
	}{
		{name: "nothing pending strands nothing", wantFree: 2000, wantHealthy: 2},
		{name: "a 1-GPU pod can use the node", pending: []engine.Pending{pendingGPUs(t, "1")}, wantFree: 2000, wantHealthy: 2},
		{name: "only 4-GPU pods pending: both free GPUs stranded", pending: []engine.Pending{pendingGPUs(t, "4")},
			wantFree: 2000, wantStranded: 2000, wantHealthy: 2},
		{name: "an unhealthy GPU is neither free nor allocated", unhealthy: []int{1}, wantFree: 1000, wantHealthy: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := cluster.NodeFromKube(api.Node{Object: *k8s.MakeNode("n").H100(2).Obj()})
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range tc.unhealthy {
				if err := n.Devices.SetHealthy(i, false); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := cluster.NewSnapshot([]cluster.Node{n}, nil)
			if err != nil {
				t.Fatal(err)
			}
			u := countGPUUnits(snap.Overlay(), pendingShapes(tc.pending))
			key := poolMode{Pool: n.Pool, Mode: "exclusive"}
			if u.Free[key] != tc.wantFree || u.Allocated[key] != 0 {
				t.Errorf("free %v allocated %v; want %d free, 0 allocated under %v", u.Free, u.Allocated, tc.wantFree, key)
			}
			if got, ok := u.Stranded[n.Pool]; !ok || got != tc.wantStranded {
				t.Errorf("stranded in pool %q = %d (present %t), want %d", n.Pool, got, ok, tc.wantStranded)
			}
			model := string(n.Devices.GPUs()[0].Model)
			healthy := u.Nodes[nodeHealth{Node: "n", Pool: n.Pool, Model: model, Health: gpuHealthy}]
			unhealthy := u.Nodes[nodeHealth{Node: "n", Pool: n.Pool, Model: model, Health: gpuUnhealthy}]
			if healthy != tc.wantHealthy || unhealthy != len(tc.unhealthy) {
				t.Errorf("node GPUs %v; want %d healthy, %d unhealthy", u.Nodes, tc.wantHealthy, len(tc.unhealthy))
			}
		})
	}
}
