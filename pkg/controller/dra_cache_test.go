package controller

import (
	"errors"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// allH100Claim asks with allocationMode All for every H100 of a node.
func allH100Claim() []dra.ClaimSpec {
	return []dra.ClaimSpec{{Name: "gpus", Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: "all", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: dra.ClassGPU, AllocationMode: resourcev1.DeviceAllocationModeAll,
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: `device.attributes["gpu.nvidia.com"].productName.contains("H100")`}}}}}}}}}}
}

func nvGPUClass() *resourcev1.DeviceClass {
	dc := &resourcev1.DeviceClass{}
	dc.Name = dra.ClassGPU
	dc.Spec.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
		Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`}}}
	return dc
}

func h100Node(name string, gpus int) cluster.Node {
	return cluster.Node{Name: name, Devices: gt.MakeDevices("H100", gpus).Obj()}
}

// allCharge compiles the All claim against the store's current view: the nvidia.com/gpu
// it is charged, or the compile error.
func allCharge(t *testing.T, d *draStore) (resources.Amount, *dra.Classes, error) {
	t.Helper()
	classes, err := d.current().compiledClasses()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := classes.Compile(allH100Claim())
	if err != nil {
		return 0, classes, err
	}
	return pc.Quota()[resources.NvidiaGPU], classes, nil
}

// The DRA store compiles the DeviceClasses against the nodes observed, so an
// allocationMode All claim is charged the most matching GPUs on one node; the classes
// are compiled again (and the spec generation moves on) only when a node's GPUs or a
// DeviceClass change, not for a node view that changed something else.
func TestDRAStoreChargesAllByObservedNodes(t *testing.T) {
	var d draStore
	d.update(nvGPUClass(), false)
	if _, _, err := allCharge(t, &d); err == nil {
		t.Fatal("an All claim compiled before any node was observed")
	}

	d.observeNodes([]cluster.Node{h100Node("a", 4), {Name: "cpu"}}, 1)
	got, first, err := allCharge(t, &d)
	if err != nil || got != 4 {
		t.Fatalf("charged %d (%v), want 4", got, err)
	}

	gen := d.specGen
	d.observeNodes([]cluster.Node{h100Node("a", 4), {Name: "cpu"}, {Name: "cpu-2"}}, 2) // no GPU changed
	if _, same, _ := allCharge(t, &d); same != first || d.specGen != gen {
		t.Errorf("a node view without GPU changes recompiled the classes (spec generation %d -> %d)", gen, d.specGen)
	}

	d.observeNodes([]cluster.Node{h100Node("a", 4), h100Node("b", 8)}, 3)
	got, second, err := allCharge(t, &d)
	if err != nil || got != 8 || second == first || d.specGen == gen {
		t.Errorf("after an 8-GPU node came: charged %d (%v), recompiled %t, spec generation moved %t; want 8, true, true",
			got, err, second != first, d.specGen != gen)
	}

	d.observeNodes([]cluster.Node{{Name: "cpu"}}, 4)
	_, _, err = allCharge(t, &d)
	var de *dra.Error
	if !errors.As(err, &de) || !strings.HasSuffix(de.Field, "allocationMode") || !strings.Contains(de.Reason, "no node of the cluster") {
		t.Errorf("no H100 left: error %v, want one on allocationMode saying no node matches", err)
	}

	d.observeNodes([]cluster.Node{h100Node("b", 8)}, 5)
	_, before, _ := allCharge(t, &d)
	d.update(nvGPUClass(), false) // the DeviceClass written again
	if _, after, _ := allCharge(t, &d); after == before {
		t.Error("a DeviceClass change kept the compiled classes")
	}
}
