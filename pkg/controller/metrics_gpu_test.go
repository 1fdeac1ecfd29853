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

// TestCountGPUUnits: allocated/free units per pool and mode, and stranded units (free
// units on nodes where no pending shape fits).
func TestCountGPUUnits(t *testing.T) {
	n, err := cluster.NodeFromKube(api.Node{Object: *k8s.MakeNode("n").H100(2).Obj()})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cluster.NewSnapshot([]cluster.Node{n}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name         string
		pending      []engine.Pending
		wantStranded resources.MilliGPU // free units no pending shape can use
	}{
		{name: "nothing pending strands nothing"},
		{name: "a 1-GPU pod can use the node", pending: []engine.Pending{pendingGPUs(t, "1")}},
		{name: "only 4-GPU pods pending: both free GPUs stranded", pending: []engine.Pending{pendingGPUs(t, "4")}, wantStranded: 2000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := countGPUUnits(snap.Overlay(), tc.pending)
			key := poolMode{Pool: n.Pool, Mode: "exclusive"}
			if u.Free[key] != 2000 || u.Allocated[key] != 0 {
				t.Errorf("free %v allocated %v; want 2000 free, 0 allocated under %v", u.Free, u.Allocated, key)
			}
			if u.Stranded != tc.wantStranded {
				t.Errorf("stranded = %d, want %d", u.Stranded, tc.wantStranded)
			}
		})
	}
}
