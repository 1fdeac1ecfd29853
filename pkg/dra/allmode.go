package dra

import (
	"strings"
	"sync"

	"k8s.io/dynamic-resource-allocation/cel"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// allocationMode All takes every device of the node it is allocated on that its
// selectors match, so how many it takes is only known on the node. Placement sizes it
// there (the matcher's sizeParts). Quota is charged before a node is chosen, and is
// charged the most the request could take: the largest number of matching devices on
// any one node of the cluster (the nodes given with WithNodes). A pod placed on a
// smaller node is over-charged, never under-charged, so admission's promise that
// admitted pods fit the quota holds whichever node placement picks; charging the
// actual count after placement would admit pods whose size quota never saw.

// ClassOption adds to what NewClasses compiles.
type ClassOption func(*Classes)

// WithNodes gives the cluster's nodes (node name -> GPUs), for what allocationMode All
// requests are charged. Without them an All request does not compile. Rebuild the
// Classes when the nodes change.
func WithNodes(nodes map[string][]devices.GPU) ClassOption {
	return func(c *Classes) {
		c.nodes = nodeDevicesFor(nodes)
		c.nodesGiven = true
	}
}

// nodeDevice is one published device of a node as a charge sees it.
type nodeDevice struct {
	dev     cel.Device
	kind    deviceKind
	profile string
}

// nodeDevicesFor lists each node's published devices that an All request may take:
// every whole GPU and fixed MIG instance, not the MIG placements of dynamic GPUs (the
// device model does not size requests over those). A node whose GPUs the inventory
// refuses is left out: it serves no claim.
func nodeDevicesFor(nodes map[string][]devices.GPU) [][]nodeDevice {
	var out [][]nodeDevice
	for name, gpus := range nodes {
		inv, err := NewNodeInventory(name, gpus)
		if err != nil {
			continue
		}
		var devs []nodeDevice
		all := inv.Devices()
		for i := range all {
			d := &all[i]
			kind, profile := publishedKind(d)
			if kind == kindMIG && len(d.ConsumesCounters) > 0 {
				continue
			}
			devs = append(devs, nodeDevice{dev: celDevice(d), kind: kind, profile: profile})
		}
		out = append(out, devs)
	}
	return out
}

// chargeMemo remembers allCharge's answers by the selectors: every pod of a workload
// compiles the same claims.
type chargeMemo struct {
	mu sync.Mutex
	m  map[string]int64
}

// allCharge is what All part p is charged: the most devices any alternative matches on
// any one node.
func (c *Classes) allCharge(p *part) int64 {
	var b strings.Builder
	b.WriteString(p.kind.String() + "\x00" + p.profile)
	for _, a := range p.alts {
		b.WriteString("\x01")
		for _, s := range a.selectors {
			b.WriteString("\x00" + s.expr)
		}
	}
	key := b.String()
	c.charges.mu.Lock()
	n, ok := c.charges.m[key]
	c.charges.mu.Unlock()
	if ok {
		return n
	}
	for _, devs := range c.nodes {
		for _, a := range p.alts {
			n = max(n, countMatching(devs, a.selectors, p.kind, p.profile))
		}
	}
	c.charges.mu.Lock()
	if len(c.charges.m) >= memoLimit {
		c.charges.m = map[string]int64{}
	}
	c.charges.m[key] = n
	c.charges.mu.Unlock()
	return n
}

// countMatching counts the devices of kind k (and profile) that sels match; a selector
// failing at run time matches nothing here (the node refuses the pod for it).
func countMatching(devs []nodeDevice, sels []selector, k deviceKind, profile string) int64 {
	var n int64
	for i := range devs {
		d := &devs[i]
		if d.kind != k || (k == kindMIG && !sameProfile(d.profile, profile)) {
			continue
		}
		if failed, bad := matchAll(sels, d.dev); failed < 0 && bad == nil {
			n++
		}
	}
	return n
}
