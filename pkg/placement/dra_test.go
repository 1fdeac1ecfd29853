package placement_test

import (
	"testing"

	itesting "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/placement"
	resourcev1 "k8s.io/api/resource/v1"
)

// gpuClaims compiles NVIDIA's gpu class for the tests.
func gpuClaims(t *testing.T) *placement.DeviceClaims {
	t.Helper()
	dc := resourcev1.DeviceClass{}
	dc.Name = dra.ClassGPU
	dc.Spec.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
		Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`}}}
	classes, err := dra.NewClasses([]resourcev1.DeviceClass{dc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return placement.NewDeviceClaims(classes)
}

// gpuSpec asks for count whole GPUs of NVIDIA's gpu class.
func gpuSpec(count int64) *resourcev1.ResourceClaimSpec {
	return &resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: dra.ClassGPU, Count: count}}}}}
}

func claimSnapshot(t *testing.T) *cluster.Snapshot {
	t.Helper()
	snap, err := cluster.NewSnapshot([]cluster.Node{
		itesting.MakeNode("a").GPUs("H100-SXM5-80GB", 8).Obj(),
		itesting.MakeNode("b").GPUs("H100-SXM5-80GB", 8).Obj(),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// The same gang asked for through nvidia.com/gpu or through a claim template of
// NVIDIA's gpu class lands on the same nodes and devices.
func TestClaimsPlaceAsExtendedResources(t *testing.T) {
	ext := itesting.MakeWorkload("ns", "w").PodSet("main", 3).CPU(1).GPUs(3).Obj()
	claim := itesting.MakeWorkload("ns", "w").PodSet("main", 3).CPU(1).GPUs(3).Obj()
	claim.PodSets[0].Claims = []api.PodClaim{{Name: "gpu", ResourceClaimTemplateName: "three", Spec: gpuSpec(3)}}
	opts := func() placement.Options { return placement.Options{Claims: gpuClaims(t)} }
	a, d := placement.PlaceWorkload(claimSnapshot(t).Overlay(), ext, nil, opts())
	if d != nil {
		t.Fatalf("extended: %v", d)
	}
	b, d := placement.PlaceWorkload(claimSnapshot(t).Overlay(), claim, nil, opts())
	if d != nil {
		t.Fatalf("claims: %v", d)
	}
	for i := range a.Pods {
		if a.Pods[i].Node != b.Pods[i].Node || a.Pods[i].Devices.String() != b.Pods[i].Devices.String() {
			t.Errorf("pod %d: extended %s %s, claims %s %s", i, a.Pods[i].Node, a.Pods[i].Devices, b.Pods[i].Node, b.Pods[i].Devices)
		}
	}
}

// A ResourceClaim named by every pod of a gang is allocated once: its devices are
// taken by the first pod, and every pod runs on its node.
func TestSharedClaimAllocatedOnceOnOneNode(t *testing.T) {
	w := itesting.MakeWorkload("ns", "w").PodSet("main", 4).CPU(1).GPUs(1).Obj()
	w.PodSets[0].Claims = []api.PodClaim{
		{Name: "own", ResourceClaimTemplateName: "one", Spec: gpuSpec(1)},
		{Name: "shared", ResourceClaimName: "pool", Spec: gpuSpec(2)},
	}
	ov := claimSnapshot(t).Overlay()
	pl, d := placement.PlaceWorkload(ov, w, nil, placement.Options{Claims: gpuClaims(t)})
	if d != nil {
		t.Fatalf("not placed: %v", d)
	}
	devs := 0
	for _, p := range pl.Pods {
		if p.Node != pl.Pods[0].Node {
			t.Errorf("pod %d on %s, pod 0 on %s: a shared claim keeps its pods on one node", p.Index, p.Node, pl.Pods[0].Node)
		}
		devs += len(p.Devices.Devices)
	}
	if devs != 4+2 {
		t.Errorf("%d devices taken, want 6 (one per pod and the shared claim's two once)", devs)
	}
}

// Five pods naming one shared claim and one GPU each do not fit one 8-GPU node with the
// shared claim's four: the gang stays pending rather than splitting across nodes.
func TestSharedClaimDoesNotSplitAcrossNodes(t *testing.T) {
	w := itesting.MakeWorkload("ns", "w").PodSet("main", 5).CPU(1).GPUs(1).Obj()
	w.PodSets[0].Claims = []api.PodClaim{
		{Name: "own", ResourceClaimTemplateName: "one", Spec: gpuSpec(1)},
		{Name: "shared", ResourceClaimName: "pool", Spec: gpuSpec(4)},
	}
	if pl, d := placement.PlaceWorkload(claimSnapshot(t).Overlay(), w, nil, placement.Options{Claims: gpuClaims(t)}); d == nil {
		t.Fatalf("placed %+v, want no placement", pl.Pods)
	}
}
