package cli

import (
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
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

// A pool whose GPUs take their MIG layout at allocation time advertises nothing to the
// device plugin: the DEVICE-PLUGIN RESOURCES column says so instead of listing the
// instances each profile alone could be carved into. A fixed pool still lists its own.
func TestSummaryDynamicPoolAdvertisesNothing(t *testing.T) {
	pool := func(name, layout string) api.NodePool {
		return api.NodePool{Meta: api.Meta{Name: name}, Count: 2, GPUModel: "A100-SXM4-40GB", GPUsPerNode: 1,
			Sharing: devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: layout}}
	}
	objs := &api.Objects{NodePools: []api.NodePool{pool("dynamic", devices.LayoutDynamic), pool("balanced", devices.LayoutBalanced)}}
	pools, _, err := summarizePools(objs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"dynamic":  "none (all-dynamic: DRA claims only)",
		"balanced": "nvidia.com/mig-1g.5gb=4,nvidia.com/mig-2g.10gb=2,nvidia.com/mig-3g.20gb=2",
	}
	for _, p := range pools {
		if p.GPUResources != want[p.Name] {
			t.Errorf("pool %s: device-plugin resources %q, want %q", p.Name, p.GPUResources, want[p.Name])
		}
		if p.GPUs != 2 || (p.Name == "dynamic" && p.MilliGPU != 2000) {
			t.Errorf("pool %s: %d GPUs, %d milli-GPU, want 2 GPUs (and 2000 for the dynamic one)", p.Name, p.GPUs, p.MilliGPU)
		}
	}
}

// A node mixing fixed and dynamic GPUs lists what its fixed GPUs advertise and how many
// GPUs only DRA claims get.
func TestPluginTextMixedNode(t *testing.T) {
	m, err := devices.LookupModel("A100-SXM4-40GB")
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := devices.NewGPUs(m, 1, devices.Sharing{Mode: devices.Exclusive}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dynamic, err := devices.NewGPUs(m, 2, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range dynamic {
		dynamic[i].Index = i + 1
	}
	gpus := append(fixed, dynamic...)
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	adv, n := pluginCapacity(gpus, nd.Capacity())
	delete(adv, resources.GPUMilli)
	delete(adv, resources.GPUMemory)
	if got, want := pluginText(adv, n), "nvidia.com/gpu=1 (and 2 all-dynamic GPUs: DRA claims only)"; got != want {
		t.Errorf("column %q, want %q", got, want)
	}
}
