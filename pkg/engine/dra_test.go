package engine

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A node dump whose GPUs are only in ResourceSlices (a cluster on NVIDIA's DRA driver,
// no device plugin) replays with those GPUs, MIG layout included; a node without
// slices stays without GPUs.
func TestNodesOfReadsGPUsFromSlices(t *testing.T) {
	m, err := devices.LookupModel("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := devices.NewGPUs(m, 4, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-balanced"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := dra.NewNodeInventory("dra-node", gpus)
	if err != nil {
		t.Fatal(err)
	}
	objs := &api.Objects{Nodes: []api.Node{kubeNode("dra-node"), kubeNode("cpu-node")}}
	for _, s := range inv.Slices() {
		objs.ResourceSlices = append(objs.ResourceSlices, api.ResourceSlice{Object: s})
	}
	nodes, err := cluster.NodesOf(objs)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, n := range nodes {
		byName[n.Name] = i
	}
	got := nodes[byName["dra-node"]]
	if got.Devices == nil {
		t.Fatal("dra-node has no GPUs: its slices were not read")
	}
	want, _ := devices.NewNodeDevices(gpus)
	if got.Devices.Capacity().String() != want.Capacity().String() {
		t.Errorf("capacity %v, want %v", got.Devices.Capacity(), want.Capacity())
	}
	if nodes[byName["cpu-node"]].Devices != nil {
		t.Error("cpu-node got GPUs without slices")
	}
}

func kubeNode(name string) api.Node {
	n := corev1.Node{}
	n.Name = name
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi")}
	return api.Node{Object: n, Source: api.Source{File: "dump.yaml"}}
}
