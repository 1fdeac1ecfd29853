package engine

import (
	"errors"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// allClaim asks for every whole GPU of a node whose product name holds product.
func allClaim(product string) []dra.ClaimSpec {
	sel := resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{
		Expression: `device.attributes["gpu.nvidia.com"].productName.contains("` + product + `")`}}
	return []dra.ClaimSpec{{Name: "gpus", Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: "all", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: dra.ClassGPU, AllocationMode: resourcev1.DeviceAllocationModeAll,
			Selectors: []resourcev1.DeviceSelector{sel}}}}}}}}
}

func gpuClass() api.DeviceClass {
	var dc resourcev1.DeviceClass
	dc.Name = dra.ClassGPU
	dc.Spec.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
		Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`}}}
	return api.DeviceClass{Object: dc}
}

func pool(name, model string, count, perNode int) api.NodePool {
	return api.NodePool{Meta: api.Meta{Name: name}, Count: count, GPUModel: model, GPUsPerNode: perNode,
		Sharing: devices.Sharing{Mode: devices.Exclusive}, CPU: 64000, Memory: 512 << 30}
}

// CompileClasses charges an allocationMode All claim by the nodes the objects describe:
// the most matching GPUs on one node. Objects without nodes compile without them (an All
// claim is then an error naming allocationMode), and nodes without a matching GPU make
// it one too.
func TestCompileClassesChargesAllByTheObjectsNodes(t *testing.T) {
	tests := []struct {
		name    string
		pools   []api.NodePool
		product string
		want    resources.Amount
		wantErr string
	}{
		{"largest H100 node", []api.NodePool{pool("h8", "H100-SXM5-80GB", 2, 8), pool("h4", "H100-SXM5-80GB", 1, 4), pool("a", "A100-SXM4-80GB", 1, 16)},
			"H100", 8, ""},
		{"only the A100 node matches", []api.NodePool{pool("h8", "H100-SXM5-80GB", 2, 8), pool("a", "A100-SXM4-80GB", 1, 4)}, "A100", 4, ""},
		{"no node matches", []api.NodePool{pool("a", "A100-SXM4-80GB", 1, 4)}, "H100", 0, "no node of the cluster"},
		{"no nodes at all", nil, "H100", 0, "without the cluster's nodes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := &api.Objects{NodePools: tc.pools, DeviceClasses: []api.DeviceClass{gpuClass()}}
			classes, err := CompileClasses(objs)
			if err != nil {
				t.Fatal(err)
			}
			pc, err := classes.Compile(allClaim(tc.product))
			if tc.wantErr != "" {
				var de *dra.Error
				if !errors.As(err, &de) || !strings.HasSuffix(de.Field, "allocationMode") || !strings.Contains(de.Reason, tc.wantErr) {
					t.Fatalf("error %v, want one on allocationMode saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := pc.Quota()[resources.NvidiaGPU]; got != tc.want {
				t.Errorf("charged %d nvidia.com/gpu, want %d", got, tc.want)
			}
		})
	}
}

// CompileClassesOn takes the nodes from the caller (the controller's); nil means none
// were given.
func TestCompileClassesOnGivenNodes(t *testing.T) {
	objs := &api.Objects{DeviceClasses: []api.DeviceClass{gpuClass()}}
	m, err := devices.LookupModel("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := devices.NewGPUs(m, 2, devices.Sharing{Mode: devices.Exclusive}, 0)
	if err != nil {
		t.Fatal(err)
	}
	classes, err := CompileClassesOn(objs, map[string][]devices.GPU{"n": gpus})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := classes.Compile(allClaim("H100"))
	if err != nil {
		t.Fatal(err)
	}
	if got := pc.Quota()[resources.NvidiaGPU]; got != 2 {
		t.Errorf("charged %d, want 2", got)
	}
	if classes, err = CompileClassesOn(objs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := classes.Compile(allClaim("H100")); err == nil {
		t.Error("an All claim compiled without nodes")
	}
}
