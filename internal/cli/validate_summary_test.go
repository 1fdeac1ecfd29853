package cli

import (
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Node objects are grouped by pool label, GPU model and sharing mode: an unlabelled
// cluster of H100s and MIG-partitioned A100s is two rows, not one "(no pool label)" row
// naming both models and one sharing mode.
func TestSummaryGroupsNodesByPoolModelAndSharing(t *testing.T) {
	// Time-slicing: 4 replicas of each of 8 GPUs, as the device plugin advertises them.
	sliced := k8s.MakeNode("h100-sliced").H100(8).Label("nvidia.com/gpu.replicas", "4").Obj()
	sliced.Status.Capacity["nvidia.com/gpu"] = resource.MustParse("32")
	nodes := []*corev1.Node{
		k8s.MakeNode("h100-a").H100(8).Obj(),
		k8s.MakeNode("h100-b").H100(8).Obj(),
		k8s.MakeNode("a100-mig").A100MIG(4).Obj(),
		sliced,
		k8s.MakeNode("train-h100").H100(8).Label("gantry.dev/node-pool", "train").Obj(),
		k8s.MakeNode("train-a100").A100MIG(4).Label("gantry.dev/node-pool", "train").Obj(),
	}
	objs := &api.Objects{}
	for _, n := range nodes {
		objs.Nodes = append(objs.Nodes, api.Node{Object: *n})
	}
	pools, _, err := summarizePools(objs)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name, model string
		nodes, gpus int
	}
	want := []row{
		{"(no pool label)", "A100-SXM4-80GB", 1, 4},
		{"(no pool label)", "H100-SXM5-80GB", 2, 16},
		{"(no pool label)", "H100-SXM5-80GB", 1, 8},
		{"train", "A100-SXM4-80GB", 1, 4},
		{"train", "H100-SXM5-80GB", 1, 8},
	}
	if len(pools) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(pools), len(want), pools)
	}
	sharing := map[string]bool{}
	for i, w := range want {
		p := pools[i]
		if p.Name != w.name || p.Model != w.model || p.Nodes != w.nodes || p.GPUs != w.gpus {
			t.Errorf("row %d = %s %s %d nodes %d GPUs, want %+v", i, p.Name, p.Model, p.Nodes, p.GPUs, w)
		}
		if p.Name == "(no pool label)" {
			sharing[p.Sharing] = true
		}
	}
	if len(sharing) != 3 {
		t.Errorf("unlabelled rows have sharing modes %v, want three different ones (mig, exclusive, time-slicing)", sharing)
	}
}
