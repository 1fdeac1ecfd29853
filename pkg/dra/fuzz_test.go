package dra_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/dynamic-resource-allocation/cel"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
)

// FuzzSelector feeds any expression to a claim's selector. It must be a compile error
// naming the selector's field, a typed refusal (a runtime error names the selector and
// a device), or an allocation whose devices the expression matches: never a panic.
func FuzzSelector(f *testing.F) {
	for _, seed := range []string{
		`device.attributes["gpu.nvidia.com"].nope == 1`,                   // no such key on every device
		`1 / (device.attributes["gpu.nvidia.com"].index - 1) == 1`,        // division by zero on GPU-1 only
		`int(device.attributes["gpu.nvidia.com"].productName) > 0`,        // a conversion that fails
		`device.attributes["gpu.nvidia.com"].index in [0, 1] || 1/0 == 1`, // fails where the first part is false
		`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("1Gi")) > 0`,
		`device.attributes[`,
		`"not a bool"`,
	} {
		f.Add(seed)
	}
	classes := mustClasses(f, nvClasses(), nil)
	cache := cel.NewCache(16, cel.Features{})
	gs, err := devices.NewGPUs(mustModel(f, "H100"), 4, devices.Sharing{Mode: devices.Exclusive}, 2)
	if err != nil {
		f.Fatal(err)
	}
	inv, err := dra.NewNodeInventory("n1", gs)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		pc, err := classes.Compile([]dra.ClaimSpec{podClaim("c", reqExact("r", dra.ClassGPU, 1, expr))})
		var de *dra.Error
		if err != nil {
			if !errors.As(err, &de) || de.Name != "c" || !strings.HasPrefix(de.Field, "spec.devices.requests[0].exactly") {
				t.Fatalf("compile error %v does not name the claim's request", err)
			}
			return
		}
		nd := gt.MakeDevices("H100", 4).NVLink(2).Obj()
		if ref := pc.Explain(nd); ref != nil {
			if ref.Reason == dra.ReasonCELError && (ref.Field != "spec.devices.requests[0].exactly.selectors[0].cel.expression" || ref.Device == "") {
				t.Fatalf("runtime error refusal %+v does not name the selector and device", *ref)
			}
			return
		}
		a, ref := nd.Fit(pc.Request())
		if ref != nil {
			t.Fatalf("Explain says it fits, Fit refuses: %v", ref)
		}
		results, err := pc.Results(inv, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range inv.Devices() {
			if d.Name != results[0].Allocation.Devices.Results[0].Device {
				continue
			}
			ok, _, err := cache.GetOrCompile(expr).DeviceMatches(context.Background(), cel.Device{Driver: dra.DriverName, Attributes: d.Attributes, Capacity: d.Capacity})
			if err != nil || !ok {
				t.Fatalf("allocated %s, which %q does not match (%v)", d.Name, expr, err)
			}
		}
	})
}
