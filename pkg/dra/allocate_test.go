package dra_test

import (
	"slices"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// TestSamePicksAsExtendedResources: a claim whose selectors add nothing to its class
// gets the devices the extended-resource request of the same size gets.
func TestSamePicksAsExtendedResources(t *testing.T) {
	classes := mustClasses(t, nvClasses(), nil)
	tests := []struct {
		name  string
		node  *gt.DevicesWrapper
		held  resources.Vector
		plain resources.Vector
		claim dra.ClaimSpec
	}{
		{"4 GPUs in one NVLink domain", gt.MakeDevices("H100", 8).NVLink(4), gt.Req("nvidia.com/gpu", "1"), gt.Req("nvidia.com/gpu", "4"),
			podClaim("c", reqExact("r", dra.ClassGPU, 4))},
		{"2 GPUs on one switch", gt.MakeDevices("H100", 8).NVLink(4), gt.Req("nvidia.com/gpu", "1"), gt.Req("nvidia.com/gpu", "2"),
			podClaim("c", reqExact("r", dra.ClassGPU, 2))},
		{"6 GPUs across domains", gt.MakeDevices("H100", 8).NVLink(4), gt.Req("nvidia.com/gpu", "1"), gt.Req("nvidia.com/gpu", "6"),
			podClaim("c", reqExact("r", dra.ClassGPU, 6))},
		{"MIG on the fullest GPU", gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, "all-balanced"), gt.Req("nvidia.com/mig-1g.5gb", "1"), gt.Req("nvidia.com/mig-1g.5gb", "1"),
			podClaim("c", reqExact("m", dra.ClassMIG, 1, `device.attributes["gpu.nvidia.com"].profile == "1g.5gb"`))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node.Obj()
			commit(t, n, mustParse(t, tc.held))
			want, ref := n.Fit(mustParse(t, tc.plain))
			if ref != nil {
				t.Fatal(ref)
			}
			got, ref := n.Fit(mustCompile(t, classes, tc.claim).Request())
			if ref != nil {
				t.Fatal(ref)
			}
			if !slices.Equal(got.IDs(), want.IDs()) {
				t.Errorf("DRA picks %v, extended resources %v", got.IDs(), want.IDs())
			}
		})
	}
}

func mustParse(t testing.TB, v resources.Vector) devices.Request {
	t.Helper()
	r, err := devices.ParseRequest(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func commit(t testing.TB, n *devices.NodeDevices, r devices.Request) devices.Assignment {
	t.Helper()
	a, ref := n.Fit(r)
	if ref != nil {
		t.Fatal(ref)
	}
	if err := n.Commit(a); err != nil {
		t.Fatal(err)
	}
	return a
}

// holdIDs commits the devices with these IDs on n.
func holdIDs(t testing.TB, n *devices.NodeDevices, ids ...string) {
	t.Helper()
	a, err := devices.AssignmentFromIDs(n, ids)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Commit(a); err != nil {
		t.Fatal(err)
	}
}

func TestSelectorsAndConstraintsNarrowPicks(t *testing.T) {
	classes := mustClasses(t, nvClasses(), nil)
	idx := func(op string) string { return `device.attributes["gpu.nvidia.com"].index ` + op }
	tests := []struct {
		name   string
		node   *gt.DevicesWrapper
		held   resources.Vector
		claims []dra.ClaimSpec
		want   []string
	}{
		{"selector on the index", gt.MakeDevices("H100", 8).NVLink(4), nil,
			[]dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 2, idx(">= 5")))}, []string{"GPU-6", "GPU-7"}},
		{"two requests with their own selectors", gt.MakeDevices("H100", 8).NVLink(4), nil,
			[]dra.ClaimSpec{podClaim("c", reqExact("big", dra.ClassGPU, 1, idx("== 7")), reqExact("any", dra.ClassGPU, 3))}, []string{"GPU-0", "GPU-1", "GPU-2", "GPU-7"}},
		{"a request whose only devices another would take first", gt.MakeDevices("H100", 4), nil,
			[]dra.ClaimSpec{podClaim("a", reqExact("any", dra.ClassGPU, 2)), podClaim("b", reqExact("low", dra.ClassGPU, 1, idx("< 1")))}, []string{"GPU-0", "GPU-1", "GPU-2"}},
		{"matchAttribute keeps one NVLink domain", gt.MakeDevices("H100", 8).NVLink(4), nil,
			[]dra.ClaimSpec{withMatch(podClaim("c", reqExact("r", dra.ClassGPU, 2)), attrNVLink)}, nil},
		{"matchAttribute on the PCIe root", gt.MakeDevices("H100", 8).NVLink(4), gt.Req("nvidia.com/gpu", "1"),
			[]dra.ClaimSpec{withMatch(podClaim("c", reqExact("a", dra.ClassGPU, 1), reqExact("b", dra.ClassGPU, 1, idx(">= 1"))), attrPCIRoot)}, []string{"GPU-2", "GPU-3"}},
		{"constraint of one claim leaves the other free", gt.MakeDevices("H100", 8).NVLink(4), gt.Req("nvidia.com/gpu", "3"),
			[]dra.ClaimSpec{withMatch(podClaim("a", reqExact("r", dra.ClassGPU, 4)), attrNVLink), podClaim("b", reqExact("r", dra.ClassGPU, 1))}, []string{"GPU-3", "GPU-4", "GPU-5", "GPU-6", "GPU-7"}},
		{"firstAvailable falls back", gt.MakeDevices("H100", 4), nil,
			[]dra.ClaimSpec{podClaim("c", reqFirst("r", subReq("none", dra.ClassGPU, 1, idx("> 9")), subReq("three", dra.ClassGPU, 1, idx("== 3"))))}, []string{"GPU-3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node.Obj()
			if tc.held != nil {
				commit(t, n, mustParse(t, tc.held))
			}
			if strings.Contains(tc.name, "NVLink domain") {
				holdIDs(t, n, "GPU-1", "GPU-2", "GPU-3", "GPU-5", "GPU-6", "GPU-7")
			}
			pc := mustCompile(t, classes, tc.claims...)
			a, ref := n.Fit(pc.Request())
			if tc.want == nil {
				if ref == nil {
					t.Fatalf("fits with %v, want a refusal", a.IDs())
				}
				return
			}
			if ref != nil {
				t.Fatal(ref)
			}
			if !slices.Equal(a.IDs(), tc.want) {
				t.Errorf("picks %v, want %v", a.IDs(), tc.want)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	classes := mustClasses(t, append(nvClasses(), classOf("strict", "device.attributes['gpu.nvidia.com'].type == 'gpu'", `device.attributes["gpu.nvidia.com"].index < 8`)), nil)
	tests := []struct {
		name   string
		node   *gt.DevicesWrapper
		held   resources.Vector
		claims []dra.ClaimSpec
		want   dra.Refusal
		detail string
	}{
		{"no device matches a claim's selector", gt.MakeDevices("A100-80GB", 4), nil,
			[]dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 1, "true", selH100))},
			dra.Refusal{Reason: dra.ReasonNoMatch, Claim: "c", Request: "r", Field: "spec.devices.requests[0].exactly.selectors[1].cel.expression", Selector: 1, Constraint: -1},
			"rules out all 4 free gpu devices"},
		{"no device matches a class's selector", gt.MakeDevices("H100", 10), gt.Req("nvidia.com/gpu", "8"),
			[]dra.ClaimSpec{podClaim("c", reqExact("r", "strict", 1))},
			dra.Refusal{Reason: dra.ReasonNoMatch, Claim: "c", Request: "r", Class: "strict", Field: "spec.selectors[1].cel.expression", Selector: 1, Constraint: -1},
			"rules out"},
		{"too few match", gt.MakeDevices("H100", 4), nil,
			[]dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 2, `device.attributes["gpu.nvidia.com"].index == 1`))},
			dra.Refusal{Reason: dra.ReasonNotEnough, Claim: "c", Request: "r", Selector: -1, Constraint: -1}, "need 2, 1 free devices match"},
		{"too few of the kind", gt.MakeDevices("H100", 2), nil,
			[]dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 3))},
			dra.Refusal{Reason: dra.ReasonNotEnough, Claim: "c", Selector: -1, Constraint: -1}, "need 3, 2 free"},
		{"constraint", gt.MakeDevices("H100", 8).NVLink(4), nil,
			[]dra.ClaimSpec{withMatch(podClaim("c", reqExact("r", dra.ClassGPU, 2)), attrNVLink)},
			dra.Refusal{Reason: dra.ReasonConstraint, Claim: "c", Field: "spec.devices.constraints[0].matchAttribute", Selector: -1, Constraint: 0}, "gantry.dev/nvlinkDomain"},
		{"CEL runtime error", gt.MakeDevices("H100", 2), nil,
			[]dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 1, `device.attributes["gpu.nvidia.com"].nope == 1`))},
			dra.Refusal{Reason: dra.ReasonCELError, Claim: "c", Request: "r", Field: "spec.devices.requests[0].exactly.selectors[0].cel.expression", Selector: 0, Constraint: -1, Device: "gpu-0"},
			"no such key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node.Obj()
			if tc.held != nil {
				commit(t, n, mustParse(t, tc.held))
			}
			if tc.want.Reason == dra.ReasonConstraint {
				holdIDs(t, n, "GPU-1", "GPU-2", "GPU-3", "GPU-5", "GPU-6", "GPU-7")
			}
			pc, err := classes.Compile(tc.claims)
			if err != nil {
				// A CEL runtime error on every catalog device is a compile error too.
				t.Fatal(err)
			}
			got := pc.Explain(n)
			if got == nil {
				t.Fatal("fits, want a refusal")
			}
			detail := got.Detail
			got.Detail = ""
			if *got != tc.want || !strings.Contains(detail, tc.detail) {
				t.Errorf("refusal %+v (detail %q), want %+v with %q", *got, detail, tc.want, tc.detail)
			}
			if _, ref := n.Fit(pc.Request()); ref == nil || !strings.Contains(ref.Reason, string(tc.want.Reason)) && tc.want.Reason != dra.ReasonNotEnough {
				t.Errorf("Fit's refusal %v does not carry %s", ref, tc.want.Reason)
			}
		})
	}
}
