package dra

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// How a node with partitionable GPUs publishes its pool. On Kubernetes 1.34 a device
// draws only on counter sets of its own slice, and a slice holds at most 32 counters
// in all its sets, 128 devices and 1024 counter consumptions in all its devices
// (resourcev1.ResourceSliceMax*): so each slice carries whole GPUs (their counter set
// and every device drawing on it), as many as the limits allow, in device order.

// partitionSlices is Slices for a node with partitionable GPUs; false when the node has
// none (Slices then chunks its devices as usual).
func (inv *NodeInventory) partitionSlices() ([]resourcev1.ResourceSlice, bool) {
	devs := inv.Devices()
	sets := counterSetsOf(devs)
	if len(sets) == 0 {
		return nil, false
	}
	chunks := packPartitioned(devs, sets)
	out := make([]resourcev1.ResourceSlice, len(chunks))
	for i, c := range chunks {
		out[i] = inv.slice(i, len(chunks), c.devices)
		out[i].Spec.SharedCounters = c.sets
	}
	return out, true
}

// counterSetsOf recovers the counter sets from the devices: a partitionable GPU's whole
// device draws every counter of its set in full.
func counterSetsOf(devs []resourcev1.Device) map[string]resourcev1.CounterSet {
	out := map[string]resourcev1.CounterSet{}
	for i := range devs {
		if !partitionableWhole(&devs[i]) {
			continue
		}
		for _, c := range devs[i].ConsumesCounters {
			out[c.CounterSet] = resourcev1.CounterSet{Name: c.CounterSet, Counters: c.Counters}
		}
	}
	return out
}

// sliceChunk is one slice's content and what it uses of the limits.
type sliceChunk struct {
	devices     []resourcev1.Device
	sets        []resourcev1.CounterSet
	counters    int
	consumption int
}

// fits reports whether a group of devices (drawing on set, nil for none) fits too.
func (c *sliceChunk) fits(group []resourcev1.Device, set *resourcev1.CounterSet) bool {
	counters, consumption := c.counters, c.consumption
	if set != nil {
		counters += len(set.Counters)
	}
	for i := range group {
		for _, cc := range group[i].ConsumesCounters {
			consumption += len(cc.Counters)
		}
	}
	return len(c.devices)+len(group) <= resourcev1.ResourceSliceMaxDevices &&
		counters <= resourcev1.ResourceSliceMaxSharedCounters && consumption <= resourcev1.ResourceSliceMaxDeviceCountersPerSlice
}

// add puts a group into the chunk.
func (c *sliceChunk) add(group []resourcev1.Device, set *resourcev1.CounterSet) {
	if set != nil {
		c.sets = append(c.sets, *set)
		c.counters += len(set.Counters)
	}
	for i := range group {
		for _, cc := range group[i].ConsumesCounters {
			c.consumption += len(cc.Counters)
		}
	}
	c.devices = append(c.devices, group...)
}

// packPartitioned splits devs into slices: each partitionable GPU's devices stay with
// their counter set; other devices go one by one.
func packPartitioned(devs []resourcev1.Device, sets map[string]resourcev1.CounterSet) []sliceChunk {
	chunks := []sliceChunk{{}}
	for _, g := range groupByCounterSet(devs) {
		var set *resourcev1.CounterSet
		if s, ok := sets[g.set]; ok {
			set = &s
		}
		if !chunks[len(chunks)-1].fits(g.devices, set) {
			chunks = append(chunks, sliceChunk{})
		}
		chunks[len(chunks)-1].add(g.devices, set)
	}
	return chunks
}

// deviceGroup is consecutive devices drawing on one counter set ("" none: then one
// device).
type deviceGroup struct {
	set     string
	devices []resourcev1.Device
}

// groupByCounterSet groups devs, in order, by the counter set they draw on.
func groupByCounterSet(devs []resourcev1.Device) []deviceGroup {
	var out []deviceGroup
	for _, d := range devs {
		set := ""
		if len(d.ConsumesCounters) > 0 {
			set = d.ConsumesCounters[0].CounterSet
		}
		if n := len(out); set != "" && n > 0 && out[n-1].set == set {
			out[n-1].devices = append(out[n-1].devices, d)
			continue
		}
		out = append(out, deviceGroup{set: set, devices: []resourcev1.Device{d}})
	}
	return out
}
