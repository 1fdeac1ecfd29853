package dra_test

import (
	"errors"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"

	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestCompileErrors(t *testing.T) {
	gpu := func(name string, exprs ...string) resourcev1.DeviceRequest {
		return reqExact(name, dra.ClassGPU, 1, exprs...)
	}
	tests := []struct {
		name   string
		claims []dra.ClaimSpec
		// want: the error's claim, field and a part of its reason
		claim, field, reason string
	}{
		{"missing class", []dra.ClaimSpec{podClaim("c", reqExact("r", "nope.example.com", 1))},
			"c", "spec.devices.requests[0].exactly.deviceClassName", `DeviceClass "nope.example.com" not found`},
		{"CEL does not compile", []dra.ClaimSpec{podClaim("c", gpu("r", "true"), gpu("s", "device.attributes[", "true"))},
			"c", "spec.devices.requests[1].exactly.selectors[0].cel.expression", "compilation failed"},
		{"CEL not bool", []dra.ClaimSpec{podClaim("c", gpu("r", "true", `"x"`))},
			"c", "spec.devices.requests[0].exactly.selectors[1].cel.expression", "must evaluate to bool"},
		{"selector without CEL", []dra.ClaimSpec{podClaim("c", resourcev1.DeviceRequest{Name: "r", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: dra.ClassGPU, Selectors: []resourcev1.DeviceSelector{{}}}})},
			"c", "spec.devices.requests[0].exactly.selectors[0].cel", "needs a CEL expression"},
		{"neither exactly nor firstAvailable", []dra.ClaimSpec{podClaim("c", resourcev1.DeviceRequest{Name: "r"})},
			"c", "spec.devices.requests[0]", "needs exactly or firstAvailable"},
		{"both exactly and firstAvailable", []dra.ClaimSpec{podClaim("c", resourcev1.DeviceRequest{Name: "r", Exactly: gpu("r").Exactly, FirstAvailable: []resourcev1.DeviceSubRequest{subReq("a", dra.ClassGPU, 1)}})},
			"c", "spec.devices.requests[0]", "mutually exclusive"},
		{"allocation mode All without the cluster's nodes", []dra.ClaimSpec{podClaim("c", reqAll("r", dra.ClassGPU))},
			"c", "spec.devices.requests[0].exactly.allocationMode", "compiled without the cluster's nodes"},
		{"allocation mode All with a count", []dra.ClaimSpec{podClaim("c", resourcev1.DeviceRequest{Name: "r", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: dra.ClassGPU, AllocationMode: resourcev1.DeviceAllocationModeAll, Count: 2}})},
			"c", "spec.devices.requests[0].exactly.count", "must not be set with allocationMode All"},
		{"firstAvailable mixing All and a count", []dra.ClaimSpec{podClaim("c", reqFirst("r", subReq("a", dra.ClassGPU, 1), subAll("b", dra.ClassGPU)))},
			"c", "spec.devices.requests[0].firstAvailable[1]", "takes every matching gpu"},
		{"negative count", []dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, -1))},
			"c", "spec.devices.requests[0].exactly.count", "outside 1..32"},
		{"duplicate request", []dra.ClaimSpec{podClaim("c", gpu("r"), gpu("r"))},
			"c", "spec.devices.requests[1].name", "given twice"},
		{"duplicate claim", []dra.ClaimSpec{podClaim("c", gpu("r")), podClaim("c", gpu("r"))},
			"c", "name", "names the claim twice"},
		{"distinctAttribute", []dra.ClaimSpec{{Name: "c", Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{gpu("r")},
			Constraints: []resourcev1.DeviceConstraint{{DistinctAttribute: ptr.To(resourcev1.FullyQualifiedName(attrNVLink))}}}}}},
			"c", "spec.devices.constraints[0].distinctAttribute", "not supported"},
		{"constraint names no request", []dra.ClaimSpec{withMatch(podClaim("c", gpu("r")), attrNVLink, "r", "x")},
			"c", "spec.devices.constraints[0].requests[1]", `names no request of the claim: "x"`},
		{"config names no request", []dra.ClaimSpec{{Name: "c", Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{gpu("r")},
			Config: []resourcev1.DeviceClaimConfiguration{{Requests: []string{"r/x"}}}}}}},
			"c", "spec.devices.config[0].requests[0]", "names no request"},
		{"GPUs and MIG in one pod", []dra.ClaimSpec{podClaim("a", gpu("r")), podClaim("b", reqExact("m", dra.ClassMIG, 1, selMIG1g10))},
			"b", "spec.devices.requests[0]", "a pod's claims take one kind of device"},
		{"MIG request picking several profiles", []dra.ClaimSpec{podClaim("c", reqExact("m", dra.ClassMIG, 1, selMem40Gi))},
			"c", "spec.devices.requests[0].exactly", "select one profile"},
		{"class without selectors picks both kinds", []dra.ClaimSpec{podClaim("c", reqExact("r", "any", 1))},
			"c", "spec.devices.requests[0].exactly", "both whole GPUs and MIG devices"},
		{"selectors pick nothing", []dra.ClaimSpec{podClaim("c", gpu("r", `device.attributes["gpu.nvidia.com"].type == "mig"`))},
			"c", "spec.devices.requests[0].exactly", "selects no gpu.nvidia.com device"},
		{"firstAvailable with different counts", []dra.ClaimSpec{podClaim("c", reqFirst("r", subReq("a", dra.ClassGPU, 1, selH100), subReq("b", dra.ClassGPU, 2)))},
			"c", "spec.devices.requests[0].firstAvailable[1]", "one device count and kind per request"},
		{"subrequest without name", []dra.ClaimSpec{podClaim("c", reqFirst("r", subReq("", dra.ClassGPU, 1)))},
			"c", "spec.devices.requests[0].firstAvailable[0].name", "needs a name"},
		{"consumable capacity", []dra.ClaimSpec{podClaim("c", resourcev1.DeviceRequest{Name: "r", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: dra.ClassGPU, Capacity: &resourcev1.CapacityRequirements{}}})},
			"c", "spec.devices.requests[0].exactly.capacity", "not supported"},
	}
	classes := mustClasses(t, append(nvClasses(), classOf("any")), nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := classes.Compile(tc.claims)
			var de *dra.Error
			if !errors.As(err, &de) {
				t.Fatalf("error %v, want a *dra.Error", err)
			}
			if de.Kind != dra.KindClaim || de.Name != tc.claim || de.Field != tc.field || !strings.Contains(de.Reason, tc.reason) {
				t.Errorf("error %+v, want claim %s field %s reason containing %q", de, tc.claim, tc.field, tc.reason)
			}
		})
	}
}

func TestNewClassesErrors(t *testing.T) {
	tests := []struct {
		name     string
		classes  []resourcev1.DeviceClass
		mappings []dra.QuotaMapping
		kind     string
		field    string
		reason   string
	}{
		{"class CEL does not compile", []resourcev1.DeviceClass{classOf("a", "true", "device.nope(")}, nil,
			dra.KindDeviceClass, "spec.selectors[1].cel.expression", "compilation failed"},
		{"class twice", []resourcev1.DeviceClass{classOf("a"), classOf("a")}, nil,
			dra.KindDeviceClass, "metadata.name", "given twice"},
		{"class mapped twice", nvClasses(), []dra.QuotaMapping{{Resource: "example.com/a", DeviceClassNames: []string{"a"}}, {Resource: "example.com/b", DeviceClassNames: []string{"a"}}},
			dra.KindQuotaMapping, "deviceClassMappings[1].deviceClassNames[0]", "already mapped to example.com/a"},
		{"mapping without a resource", nvClasses(), []dra.QuotaMapping{{DeviceClassNames: []string{"a"}}},
			dra.KindQuotaMapping, "deviceClassMappings[0].name", "needs a resource name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dra.NewClasses(tc.classes, tc.mappings)
			var de *dra.Error
			if !errors.As(err, &de) || de.Kind != tc.kind || de.Field != tc.field || !strings.Contains(de.Reason, tc.reason) {
				t.Errorf("error %v, want %s %s containing %q", err, tc.kind, tc.field, tc.reason)
			}
		})
	}
}

func TestRequestAndQuota(t *testing.T) {
	custom := []dra.QuotaMapping{
		{Resource: "example.com/h100", DeviceClassNames: []string{"h100"}},
		{Resource: "example.com/mig-<profile>", DeviceClassNames: []string{dra.ClassMIG}},
	}
	classes := append(nvClasses(), classOf("h100", "device.attributes['gpu.nvidia.com'].type == 'gpu'", selH100))
	tests := []struct {
		name      string
		mappings  []dra.QuotaMapping
		claims    []dra.ClaimSpec
		wantUnits int64
		wantMIG   string // "profile=count,..."
		wantQuota resources.Vector
	}{
		{"two GPUs", nil, []dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 2))},
			2, "", resources.Vector{resources.NvidiaGPU: 2}},
		{"count defaults to one", nil, []dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 0))},
			1, "", resources.Vector{resources.NvidiaGPU: 1}},
		{"claims of one kind add up", nil, []dra.ClaimSpec{podClaim("a", reqExact("r", dra.ClassGPU, 2)), podClaim("b", reqExact("r", dra.ClassGPU, 1, selH100))},
			3, "", resources.Vector{resources.NvidiaGPU: 3}},
		{"MIG profile from selectors", nil, []dra.ClaimSpec{podClaim("c", reqExact("m", dra.ClassMIG, 2, selMIG1g10), reqExact("n", dra.ClassMIG, 1, `device.attributes["gpu.nvidia.com"].profile == "3g.40gb"`))},
			0, "1g.10gb=2,3g.40gb=1", resources.Vector{"nvidia.com/mig-1g.10gb": 2, "nvidia.com/mig-3g.40gb": 1}},
		{"admin access consumes nothing", nil, []dra.ClaimSpec{podClaim("c", reqAdmin("mon", dra.ClassGPU, 1))},
			0, "", resources.Vector{}},
		{"unmapped class counts as its kind", custom, []dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 1))},
			1, "", resources.Vector{resources.NvidiaGPU: 1}},
		{"custom mappings", custom, []dra.ClaimSpec{podClaim("a", reqExact("r", "h100", 2))},
			2, "", resources.Vector{"example.com/h100": 2}},
		{"custom per-profile mapping", custom, []dra.ClaimSpec{podClaim("a", reqExact("m", dra.ClassMIG, 1, `device.attributes["gpu.nvidia.com"].profile == "1g.10gb+me"`))},
			0, "1g.10gb+me=1", resources.Vector{"example.com/mig-1g.10gb.me": 1}},
		{"firstAvailable of one kind", nil, []dra.ClaimSpec{podClaim("c", reqFirst("r", subReq("h100", dra.ClassGPU, 2, selH100), subReq("any", dra.ClassGPU, 2)))},
			2, "", resources.Vector{resources.NvidiaGPU: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pc := mustCompile(t, mustClasses(t, classes, tc.mappings), tc.claims...)
			r := pc.Request()
			var mig []string
			for _, m := range r.MIG {
				mig = append(mig, m.Profile+"="+resources.Format("", resources.Amount(m.Count)))
			}
			if r.Units != tc.wantUnits || strings.Join(mig, ",") != tc.wantMIG {
				t.Errorf("request %s (MIG %v), want %d units and MIG %q", r, mig, tc.wantUnits, tc.wantMIG)
			}
			if (r.Filter == nil) != r.IsZero() {
				t.Errorf("filter %v on request %s: want one exactly when the request takes devices", r.Filter, r)
			}
			if got := pc.Quota(); got.String() != tc.wantQuota.String() {
				t.Errorf("quota %s, want %s", got, tc.wantQuota)
			}
		})
	}
}

func TestQuotaNeedsOneResourcePerRequest(t *testing.T) {
	classes := mustClasses(t, append(nvClasses(), classOf("h100", "device.attributes['gpu.nvidia.com'].type == 'gpu'", selH100)),
		[]dra.QuotaMapping{{Resource: "example.com/h100", DeviceClassNames: []string{"h100"}}})
	_, err := classes.Compile([]dra.ClaimSpec{podClaim("c", reqFirst("r", subReq("a", "h100", 1), subReq("b", dra.ClassGPU, 1)))})
	var de *dra.Error
	if !errors.As(err, &de) || de.Field != "spec.devices.requests[0].firstAvailable[1].deviceClassName" || !strings.Contains(de.Reason, "quota needs one resource") {
		t.Errorf("error %v, want one on firstAvailable[1]'s class", err)
	}
}
