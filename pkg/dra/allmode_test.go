package dra_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// reqAll is a request for every device of class its selectors match on the node.
func reqAll(name, class string, exprs ...string) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeAll, Selectors: celSelectors(exprs...)}}
}

func subAll(name, class string, exprs ...string) resourcev1.DeviceSubRequest {
	return resourcev1.DeviceSubRequest{Name: name, DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeAll, Selectors: celSelectors(exprs...)}
}

// gpusOf builds count GPUs of model with sharing, perDomain to an NVLink domain.
func gpusOf(t testing.TB, model string, count int, sharing devices.Sharing, perDomain int) []devices.GPU {
	t.Helper()
	m, err := devices.LookupModel(model)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := devices.NewGPUs(m, count, sharing, perDomain)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

var (
	exclusive  = devices.Sharing{Mode: devices.Exclusive}
	mixed1g5gb = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-1g.5gb"}
	dynamicMIG = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}
)

const selIndexBelow4 = `device.attributes["gpu.nvidia.com"].index < 4`

// TestAllModeQuota: an All request is charged the most devices it matches on any one
// node of the cluster, by the quota mapping of its class.
func TestAllModeQuota(t *testing.T) {
	cluster := map[string][]devices.GPU{
		"big":   gpusOf(t, "H100", 8, exclusive, 4),
		"small": gpusOf(t, "H100", 4, exclusive, 0),
		"a100":  gpusOf(t, "A100", 2, mixed1g5gb, 0),
		"dyn":   gpusOf(t, "A100", 3, dynamicMIG, 0),
	}
	classes := mustClasses(t, nvClasses(), nil, dra.WithNodes(cluster))
	tests := []struct {
		name   string
		claims []dra.ClaimSpec
		want   resources.Vector
	}{
		// The dynamic node's 3 GPUs are whole gpu devices too, fewer than 8.
		{"every GPU", []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU))}, resources.Vector{resources.NvidiaGPU: 8}},
		{"every GPU below index 4", []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU, selIndexBelow4))}, resources.Vector{resources.NvidiaGPU: 4}},
		{"every 1g.5gb MIG device (not a dynamic GPU's placements)", []dra.ClaimSpec{podClaim("c", reqAll("m", dra.ClassMIG, `device.attributes["gpu.nvidia.com"].profile == "1g.5gb"`))},
			resources.Vector{"nvidia.com/mig-1g.5gb": 14}},
		{"All beside a count", []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU, selIndexBelow4), reqExact("s", dra.ClassGPU, 2))}, resources.Vector{resources.NvidiaGPU: 6}},
		{"firstAvailable: the larger alternative", []dra.ClaimSpec{podClaim("c", reqFirst("r", subAll("a", dra.ClassGPU, selIndexBelow4), subAll("b", dra.ClassGPU)))}, resources.Vector{resources.NvidiaGPU: 8}},
		{"admin access counts nothing", []dra.ClaimSpec{podClaim("c", adminAll("r", dra.ClassGPU))}, resources.Vector{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pc := mustCompile(t, classes, tc.claims...)
			if got := pc.Quota(); !maps.Equal(got, tc.want) {
				t.Errorf("quota %v, want %v", got, tc.want)
			}
		})
	}
	_, err := classes.Compile([]dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU, `device.attributes["gpu.nvidia.com"].index > 8`))})
	var de *dra.Error
	if !errors.As(err, &de) || de.Field != "spec.devices.requests[0].exactly.allocationMode" || !strings.Contains(de.Reason, "no node of the cluster") {
		t.Errorf("All matching no node: error %v, want one on allocationMode saying no node matches", err)
	}
}

func adminAll(name, class string, exprs ...string) resourcev1.DeviceRequest {
	r := reqAll(name, class, exprs...)
	r.Exactly.AdminAccess = ptr.To(true)
	return r
}

// TestAllModeTakesEveryMatchingDevice: on a node, an All request takes every device
// its selectors match, or refuses the node saying which held device stops it.
func TestAllModeTakesEveryMatchingDevice(t *testing.T) {
	h100 := func() []devices.GPU { return gpusOf(t, "H100", 8, exclusive, 4) }
	tests := []struct {
		name   string
		gpus   []devices.GPU
		held   []string
		claims []dra.ClaimSpec
		want   []string // picks; nil: refused with reason
		reason dra.RefusalReason
		device string // the refusal's device
		detail string
	}{
		{"every GPU of the node", h100(), nil, []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU))},
			[]string{"GPU-0", "GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5", "GPU-6", "GPU-7"}, "", "", ""},
		{"every GPU its selector matches", h100(), []string{"GPU-5"}, []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU, selIndexBelow4))},
			[]string{"GPU-0", "GPU-1", "GPU-2", "GPU-3"}, "", "", ""},
		{"a matching GPU held by another pod", h100(), []string{"GPU-2", "GPU-3"}, []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU, selIndexBelow4))},
			nil, dra.ReasonHeld, "gpu-2", "2 of the 4 matching devices are held by others"},
		{"All beside a count takes the rest", h100(), nil, []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU, selIndexBelow4)), podClaim("d", reqExact("s", dra.ClassGPU, 2))},
			[]string{"GPU-0", "GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5"}, "", "", ""},
		{"a count that only All's devices could meet", h100(), nil, []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU), reqExact("s", dra.ClassGPU, 1))},
			nil, dra.ReasonNotEnough, "", "together need more"},
		{"matchAttribute over devices in two NVLink domains", h100(), nil, []dra.ClaimSpec{withMatch(podClaim("c", reqAll("r", dra.ClassGPU)), attrNVLink)},
			nil, dra.ReasonConstraint, "", "nvlinkDomain"},
		{"matchAttribute within one domain", h100(), nil, []dra.ClaimSpec{withMatch(podClaim("c", reqAll("r", dra.ClassGPU, selIndexBelow4)), attrNVLink)},
			[]string{"GPU-0", "GPU-1", "GPU-2", "GPU-3"}, "", "", ""},
		{"firstAvailable falls back when All's devices are held", h100(), []string{"GPU-0"},
			[]dra.ClaimSpec{podClaim("c", reqFirst("r", subAll("low", dra.ClassGPU, selIndexBelow4), subAll("high", dra.ClassGPU, `device.attributes["gpu.nvidia.com"].index >= 4`)))},
			[]string{"GPU-4", "GPU-5", "GPU-6", "GPU-7"}, "", "", ""},
		{"every MIG device of a profile", gpusOf(t, "A100", 2, mixed1g5gb, 0), nil,
			[]dra.ClaimSpec{podClaim("c", reqAll("m", dra.ClassMIG, `device.attributes["gpu.nvidia.com"].profile == "1g.5gb"`, `device.attributes["gpu.nvidia.com"].parentIndex == 1`))},
			[]string{"GPU-1/mig-1g.5gb@0", "GPU-1/mig-1g.5gb@1", "GPU-1/mig-1g.5gb@2", "GPU-1/mig-1g.5gb@3", "GPU-1/mig-1g.5gb@4", "GPU-1/mig-1g.5gb@5", "GPU-1/mig-1g.5gb@6"}, "", "", ""},
		{"more devices than an allocation may list", gpusOf(t, "A100", 5, mixed1g5gb, 0), nil,
			[]dra.ClaimSpec{podClaim("c", reqAll("m", dra.ClassMIG, `device.attributes["gpu.nvidia.com"].profile == "1g.5gb"`))},
			nil, dra.ReasonNotEnough, "", "more than the 32"},
		{"a dynamic GPU's placements", gpusOf(t, "A100", 1, dynamicMIG, 0), nil,
			[]dra.ClaimSpec{podClaim("c", reqAll("m", dra.ClassMIG, `device.attributes["gpu.nvidia.com"].profile == "3g.20gb"`))},
			nil, dra.ReasonNotEnough, "", "cannot take the placements of GPU-0"},
		{"a dynamic GPU whole", gpusOf(t, "A100", 2, dynamicMIG, 0), nil, []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU))},
			[]string{"GPU-0", "GPU-1"}, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Another node with a fixed layout: an All request matching no node's
			// devices does not compile.
			other := gpusOf(t, "A100", 1, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-balanced"}, 0)
			classes := mustClasses(t, nvClasses(), nil, dra.WithNodes(map[string][]devices.GPU{"n1": tc.gpus, "other": other}))
			nd, err := devices.NewNodeDevices(tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			holdIDs(t, nd, tc.held...)
			pc := mustCompile(t, classes, tc.claims...)
			a, ref := nd.Fit(pc.Request())
			if tc.want != nil {
				if ref != nil {
					t.Fatal(ref)
				}
				if !slices.Equal(a.IDs(), tc.want) {
					t.Errorf("picks %v, want %v", a.IDs(), tc.want)
				}
				checkAllResults(t, pc, tc.gpus, tc.held, a)
				return
			}
			if ref == nil {
				t.Fatalf("fits with %v, want a refusal", a.IDs())
			}
			got := pc.Explain(nd)
			if got == nil || got.Reason != tc.reason || got.Device != tc.device || !strings.Contains(got.Detail, tc.detail) {
				t.Errorf("refusal %+v, want %s on device %q with %q", got, tc.reason, tc.device, tc.detail)
			}
		})
	}
}

// checkAllResults: the allocation lists every assigned device once, and an assignment
// short of one of All's devices is refused.
func checkAllResults(t *testing.T, pc *dra.PodClaims, gpus []devices.GPU, held []string, a devices.Assignment) {
	t.Helper()
	inv, err := dra.NewNodeInventory("n1", gpus)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pc.Results(inv, a)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		for _, d := range r.Allocation.Devices.Results {
			got = append(got, d.Device)
		}
	}
	if len(got) != len(a.Devices) {
		t.Errorf("results list %v for assignment %v", got, a.IDs())
	}
	short := devices.Assignment{Devices: a.Devices[1:]}
	if _, err := pc.Results(inv, short); err == nil {
		t.Errorf("results for %v, short of %s: no error", short.IDs(), a.Devices[0].ID())
	}
}

// TestAllModeAdminAccess: an admin-access All request is given every matching device,
// held or not, and consumes none.
func TestAllModeAdminAccess(t *testing.T) {
	gpus := gpusOf(t, "H100", 4, exclusive, 0)
	classes := mustClasses(t, nvClasses(), nil, dra.WithNodes(map[string][]devices.GPU{"n1": gpus}))
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	holdIDs(t, nd, "GPU-1")
	pc := mustCompile(t, classes, podClaim("mon", adminAll("all", dra.ClassGPU)), podClaim("work", reqExact("r", dra.ClassGPU, 1)))
	a, ref := nd.Fit(pc.Request())
	if ref != nil {
		t.Fatal(ref)
	}
	inv, err := dra.NewNodeInventory("n1", gpus)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pc.Results(inv, a)
	if err != nil {
		t.Fatal(err)
	}
	var admin []string
	for _, d := range res[0].Allocation.Devices.Results {
		if d.AdminAccess == nil || !*d.AdminAccess {
			t.Errorf("%s without adminAccess", d.Device)
		}
		admin = append(admin, d.Device)
	}
	if want := []string{"gpu-0", "gpu-1", "gpu-2", "gpu-3"}; !slices.Equal(admin, want) {
		t.Errorf("admin devices %v, want %v", admin, want)
	}
	if len(a.Devices) != 1 {
		t.Errorf("assignment %v, want the work claim's one GPU", a.IDs())
	}
}
