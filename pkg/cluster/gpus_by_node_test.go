package cluster_test

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// Each node with GPUs is listed under its name with its GPUs; a node without any is not.
func TestGPUsByNode(t *testing.T) {
	nodes := []cluster.Node{
		{Name: "h100", Devices: gt.MakeDevices("H100", 8).Obj()},
		{Name: "cpu"},
		{Name: "a100", Devices: gt.MakeDevices("A100-80GB", 4).Unhealthy(1).Obj()},
	}
	got := cluster.GPUsByNode(nodes)
	for _, tc := range []struct {
		node      string
		wantGPUs  int
		wantModel string
	}{
		{"h100", 8, "H100-SXM5-80GB"},
		{"a100", 4, "A100-SXM4-80GB"},
		{"cpu", 0, ""},
	} {
		gpus, ok := got[tc.node]
		if ok != (tc.wantGPUs > 0) || len(gpus) != tc.wantGPUs {
			t.Errorf("node %s: listed %t with %d GPUs, want %d", tc.node, ok, len(gpus), tc.wantGPUs)
			continue
		}
		if tc.wantGPUs > 0 && string(gpus[0].Model) != tc.wantModel {
			t.Errorf("node %s: model %s, want %s", tc.node, gpus[0].Model, tc.wantModel)
		}
	}
	if got["a100"][1].Healthy {
		t.Errorf("a100 GPU 1 is listed healthy; the node marks it unhealthy")
	}
	if len(got) != 2 {
		t.Errorf("%d nodes listed, want 2", len(got))
	}
}
