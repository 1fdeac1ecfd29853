package dra

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/dynamic-resource-allocation/cel"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// deviceKind is what a request takes from Gantry's device model: whole GPUs
// (devices.Request.Units) or MIG instances of one profile (devices.Request.MIG).
type deviceKind uint8

const (
	kindGPU deviceKind = iota + 1
	kindMIG
)

func (k deviceKind) String() string {
	if k == kindMIG {
		return DeviceTypeMIG
	}
	return DeviceTypeGPU
}

// representative is one device of the catalog: a whole GPU of a model, or one instance
// of one of its MIG profiles, as the driver would publish it.
type representative struct {
	dev     cel.Device
	kind    deviceKind
	profile string // NVIDIA's spelling; "" for a whole GPU
}

// catalogRepresentatives lists a whole GPU of every catalog model and an instance of
// every MIG profile, at its first start slot.
func catalogRepresentatives() []representative {
	var out []representative
	for _, m := range devices.Models() {
		g := devices.GPU{Model: m.ID, Healthy: true}
		whole := DeviceFor(g, nil)
		out = append(out, representative{dev: celDevice(&whole), kind: kindGPU})
		if m.MIG == nil {
			continue
		}
		for _, p := range m.MIG.Profiles {
			in := devices.Instance{Profile: p.Name, Start: p.Starts[0]}
			d := DeviceFor(g, &in)
			out = append(out, representative{dev: celDevice(&d), kind: kindMIG, profile: p.Name})
		}
	}
	return out
}

// kindOf says which kind of device sels pick among the catalog's, and for MIG which
// profile: one kind and one profile, or the reason it is not. A selector that matches
// no catalog device (or fails on each) reads facts of one device, such as its index or
// UUID, that the catalog's devices cannot stand for: it narrows nothing here and is
// left to the node's devices. A MIG profile must therefore be selected by a selector
// of its own, not in one expression with such facts.
func (c *Classes) kindOf(sels []selector) (deviceKind, string, string) {
	exprs := make([]string, len(sels))
	for i := range sels {
		exprs[i] = sels[i].expr
	}
	key := strings.Join(exprs, "\x00")
	c.kinds.mu.Lock()
	got, ok := c.kinds.m[key]
	c.kinds.mu.Unlock()
	if !ok {
		got.kind, got.profile, got.why = c.findKind(sels)
		c.kinds.mu.Lock()
		if len(c.kinds.m) >= memoLimit {
			c.kinds.m = map[string]kindAnswer{}
		}
		c.kinds.m[key] = got
		c.kinds.mu.Unlock()
	}
	return got.kind, got.profile, got.why
}

// kindMemo remembers kindOf's answers by the selectors' expressions: every pod of a
// workload compiles the same claims, and each answer evaluates the whole catalog.
type kindMemo struct {
	mu sync.Mutex
	m  map[string]kindAnswer
}

type kindAnswer struct {
	kind         deviceKind
	profile, why string
}

// findKind is kindOf without the memo.
func (c *Classes) findKind(sels []selector) (deviceKind, string, string) {
	informative := c.informative(sels)
	var kinds []deviceKind
	var profiles []string
	for i := range c.reps {
		r := &c.reps[i]
		if failed, _ := matchAll(informative, r.dev); failed >= 0 {
			continue
		}
		if !slices.Contains(kinds, r.kind) {
			kinds = append(kinds, r.kind)
		}
		if r.kind == kindMIG && !slices.Contains(profiles, r.profile) {
			profiles = append(profiles, r.profile)
		}
	}
	switch {
	case len(kinds) == 0:
		return 0, "", fmt.Sprintf("selects no %s device of any GPU model Gantry knows (its selectors contradict each other)", DriverName)
	case len(kinds) > 1:
		return 0, "", fmt.Sprintf("selects both whole GPUs and MIG devices: narrow it with device.attributes[%q].type", DriverName)
	case kinds[0] == kindMIG && len(profiles) > 1:
		return 0, "", fmt.Sprintf("selects MIG devices of %d profiles (%s): select one profile (device.attributes[%q].profile) in a selector of its own", len(profiles), strings.Join(profiles, ", "), DriverName)
	case kinds[0] == kindMIG:
		return kindMIG, profiles[0], ""
	}
	return kindGPU, "", ""
}

// informative lists the selectors that match some catalog device.
func (c *Classes) informative(sels []selector) []selector {
	var out []selector
	for _, s := range sels {
		one := []selector{s}
		if slices.ContainsFunc(c.reps, func(r representative) bool { f, _ := matchAll(one, r.dev); return f < 0 }) {
			out = append(out, s)
		}
	}
	return out
}
