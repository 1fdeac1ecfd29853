package dra_test

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
)

// opaque is a driver config carrying raw JSON.
func opaque(json string) resourcev1.DeviceConfiguration {
	return resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: dra.DriverName, Parameters: runtime.RawExtension{Raw: []byte(json)}}}
}

func result(req, dev string) resourcev1.DeviceRequestAllocationResult {
	return resourcev1.DeviceRequestAllocationResult{Request: req, Driver: dra.DriverName, Pool: "n1", Device: dev}
}

func TestResults(t *testing.T) {
	gpuClass := nvClasses()[0]
	gpuClass.Spec.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: opaque(`{"class":true}`)}}
	classes := mustClasses(t, append(nvClasses()[1:], gpuClass), nil)
	idx := func(op string) string { return `device.attributes["gpu.nvidia.com"].index ` + op }
	train := podClaim("train", reqExact("a", dra.ClassGPU, 2), reqFirst("b", subReq("huge", dra.ClassGPU, 1, idx("> 9")), subReq("low", dra.ClassGPU, 1, idx("< 4"))))
	train.Spec.Devices.Config = []resourcev1.DeviceClaimConfiguration{
		{DeviceConfiguration: opaque(`{"all":true}`)},
		{Requests: []string{"b/huge"}, DeviceConfiguration: opaque(`{"huge":true}`)},
		{Requests: []string{"b/low"}, DeviceConfiguration: opaque(`{"low":true}`)},
	}
	mon := podClaim("mon", reqAdmin("watch", dra.ClassGPU, 1, idx("== 0")))
	pc := mustCompile(t, classes, train, mon)

	gs, err := devices.NewGPUs(mustModel(t, "H100"), 4, devices.Sharing{Mode: devices.Exclusive}, 0)
	if err != nil {
		t.Fatal(err)
	}
	nd, err := devices.NewNodeDevices(gs)
	if err != nil {
		t.Fatal(err)
	}
	holdIDs(t, nd, "GPU-0") // admin access still gets it
	a, ref := nd.Fit(pc.Request())
	if ref != nil {
		t.Fatal(ref)
	}
	inv, err := dra.NewNodeInventory("n1", gs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pc.Results(inv, a)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}}}
	adminResult := result("watch", "gpu-0")
	adminResult.AdminAccess = ptr.To(true)
	want := []dra.ClaimResult{
		{Claim: "train", Allocation: resourcev1.AllocationResult{NodeSelector: node, Devices: resourcev1.DeviceAllocationResult{
			Results: []resourcev1.DeviceRequestAllocationResult{result("a", "gpu-2"), result("a", "gpu-3"), result("b/low", "gpu-1")},
			Config: []resourcev1.DeviceAllocationConfiguration{
				{Source: resourcev1.AllocationConfigSourceClass, Requests: []string{"a", "b/low"}, DeviceConfiguration: opaque(`{"class":true}`)},
				{Source: resourcev1.AllocationConfigSourceClaim, DeviceConfiguration: opaque(`{"all":true}`)},
				{Source: resourcev1.AllocationConfigSourceClaim, Requests: []string{"b/low"}, DeviceConfiguration: opaque(`{"low":true}`)},
			}}}},
		{Claim: "mon", Allocation: resourcev1.AllocationResult{NodeSelector: node, Devices: resourcev1.DeviceAllocationResult{
			Results: []resourcev1.DeviceRequestAllocationResult{adminResult},
			Config:  []resourcev1.DeviceAllocationConfiguration{{Source: resourcev1.AllocationConfigSourceClass, Requests: []string{"watch"}, DeviceConfiguration: opaque(`{"class":true}`)}},
		}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results\n%+v\nwant\n%+v", got, want)
	}
}

func mustModel(t testing.TB, name string) devices.Model {
	t.Helper()
	m, err := devices.LookupModel(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestResultsRefuseAssignmentsTheClaimsCannotUse(t *testing.T) {
	classes := mustClasses(t, nvClasses(), nil)
	pc := mustCompile(t, classes, podClaim("c", reqExact("r", dra.ClassGPU, 2, `device.attributes["gpu.nvidia.com"].index >= 2`)))
	gs, err := devices.NewGPUs(mustModel(t, "H100"), 4, devices.Sharing{Mode: devices.Exclusive}, 0)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := dra.NewNodeInventory("n1", gs)
	if err != nil {
		t.Fatal(err)
	}
	whole := func(i ...int) devices.Assignment {
		var a devices.Assignment
		for _, k := range i {
			a.Devices = append(a.Devices, devices.Device{GPU: k, Kind: devices.WholeGPU})
		}
		return a
	}
	tests := []struct {
		name string
		a    devices.Assignment
		want string
	}{
		{"a device the selector rules out", whole(1, 2), "does not meet the claims"},
		{"too few devices", whole(2), "the claims take 2"},
		{"a replica", devices.Assignment{Devices: []devices.Device{{GPU: 2, Kind: devices.ReplicaDevice}, {GPU: 3, Kind: devices.WholeGPU}}}, "not a DRA device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := pc.Results(inv, tc.a); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestResultsMIGAndAdminOnly(t *testing.T) {
	classes := mustClasses(t, nvClasses(), nil)
	prof := func(p string) string { return `device.attributes["gpu.nvidia.com"].profile == "` + p + `"` }
	gs, err := devices.NewGPUs(mustModel(t, "A100"), 2, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-balanced"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	nd, err := devices.NewNodeDevices(gs)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := dra.NewNodeInventory("n1", gs)
	if err != nil {
		t.Fatal(err)
	}
	pc := mustCompile(t, classes, podClaim("small", reqExact("r", dra.ClassMIG, 2, prof("1g.5gb"))), podClaim("big", reqExact("r", dra.ClassMIG, 1, prof("3g.20gb"))))
	a, ref := nd.Fit(pc.Request())
	if ref != nil {
		t.Fatal(ref)
	}
	got, err := pc.Results(inv, a)
	if err != nil {
		t.Fatal(err)
	}
	devicesOf := func(r dra.ClaimResult) []string {
		var out []string
		for _, d := range r.Allocation.Devices.Results {
			out = append(out, d.Device)
		}
		return out
	}
	if s, b := devicesOf(got[0]), devicesOf(got[1]); !reflect.DeepEqual(s, []string{"gpu-0-mig-1g5gb-19-2", "gpu-0-mig-1g5gb-19-3"}) || !reflect.DeepEqual(b, []string{"gpu-0-mig-3g20gb-9-4"}) {
		t.Errorf("small %v, big %v", s, b)
	}

	watch := mustCompile(t, classes, podClaim("mon", reqAdmin("all", dra.ClassMIG, 2, prof("1g.5gb"))))
	if r := watch.Request(); !r.IsZero() {
		t.Fatalf("admin-only request %s, want none", r)
	}
	got, err = watch.Results(inv, devices.Assignment{})
	if err != nil {
		t.Fatal(err)
	}
	if d := devicesOf(got[0]); !reflect.DeepEqual(d, []string{"gpu-0-mig-1g5gb-19-2", "gpu-0-mig-1g5gb-19-3"}) {
		t.Errorf("admin devices %v", d)
	}
	tooMany := mustCompile(t, classes, podClaim("mon", reqAdmin("all", dra.ClassMIG, 5, prof("1g.5gb"))))
	if _, err := tooMany.Results(inv, devices.Assignment{}); err == nil || !strings.Contains(err.Error(), "too few published devices match") {
		t.Errorf("error %v, want too few", err)
	}
}

// TestPodClaimsSharedAcrossGoroutines: one compiled PodClaims serves concurrent Fit
// calls (run with -race); each gets the answer a lone call gets.
func TestPodClaimsSharedAcrossGoroutines(t *testing.T) {
	pc := mustCompile(t, mustClasses(t, nvClasses(), nil), podClaim("c", reqExact("r", dra.ClassGPU, 2, `device.attributes["gpu.nvidia.com"].index % 2 == 1`)))
	want, ref := gt.MakeDevices("H100", 8).Obj().Fit(pc.Request())
	if ref != nil {
		t.Fatal(ref)
	}
	got := make([][]string, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, _ := gt.MakeDevices("H100", 8).Obj().Fit(pc.Request())
			got[i] = a.IDs()
		}()
	}
	wg.Wait()
	for _, g := range got {
		if !reflect.DeepEqual(g, want.IDs()) {
			t.Errorf("concurrent picks %v, alone %v", g, want.IDs())
		}
	}
}
