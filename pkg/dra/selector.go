package dra

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
)

// celCacheSize bounds the compiled-expression cache one Classes keeps: a cluster has a
// handful of distinct selectors.
const celCacheSize = 256

// selector is one compiled CEL selector and where it was written.
type selector struct {
	expr string
	prog cel.CompilationResult
	// class is the DeviceClass the selector comes from ("" for a claim's own); field the
	// selector's path inside the class or claim; index its position there.
	class string
	field string
	index int
}

// compileSelectors compiles sels with the shared cache; field is the path of the list
// ("spec.selectors"). The error names the failing selector's expression field.
func compileSelectors(cache *cel.Cache, sels []resourcev1.DeviceSelector, class, field string) ([]selector, string, string) {
	out := make([]selector, 0, len(sels))
	for i, s := range sels {
		f := fmt.Sprintf("%s[%d].cel", field, i)
		if s.CEL == nil {
			return nil, f, "a selector needs a CEL expression"
		}
		f += ".expression"
		res := cache.GetOrCompile(s.CEL.Expression)
		if res.Error != nil {
			return nil, f, res.Error.Error()
		}
		out = append(out, selector{expr: s.CEL.Expression, prog: res, class: class, field: f, index: i})
	}
	return out, "", ""
}

// celDevice is d as the CEL environment sees it: attributes without a domain belong to
// the driver's.
func celDevice(d *resourcev1.Device) cel.Device {
	return cel.Device{Driver: DriverName, Attributes: d.Attributes, Capacity: d.Capacity}
}

// evalError is a selector that failed at run time on a device.
type evalError struct {
	sel *selector
	err error
}

// matchAll evaluates sels in order on d, as the upstream allocator does: the first
// selector that does not match decides (failed is its position), and a runtime error
// stops the evaluation. failed is -1 when every selector matches.
func matchAll(sels []selector, d cel.Device) (failed int, bad *evalError) {
	for i := range sels {
		ok, _, err := sels[i].prog.DeviceMatches(context.Background(), d)
		if err != nil {
			return i, &evalError{sel: &sels[i], err: err}
		}
		if !ok {
			return i, nil
		}
	}
	return -1, nil
}
