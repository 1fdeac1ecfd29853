package draplugin

import (
	"context"
	"fmt"
	"sort"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

// Health: a device that turns unhealthy leaves the published pool, so no new claim is
// allocated it (Gantry and kube-scheduler both allocate only published devices); claims
// already prepared keep it until unprepared. Kubernetes 1.34 could instead taint the
// device (DeviceTaintRule, spec.devices[].taints), but only behind the alpha
// DRADeviceTaints feature gate, which a default cluster lacks; republishing works on every
// 1.34 cluster.

// HealthSink is the health watcher's sink for the DRA plugin: each event takes its
// devices out of the published pool and republishes. next, if set, is told too (the
// device plugin path's Node updates).
func (d *Driver) HealthSink(ctx context.Context, next nodeagent.HealthSink) nodeagent.HealthSink {
	return func(ev nodeagent.HealthEvent) {
		if err := d.MarkUnhealthy(ctx, ev); err != nil {
			fmt.Fprintf(d.cfg.Log, "error: DRA plugin: %v\n", err)
		}
		if next != nil {
			next(ev)
		}
	}
}

// MarkUnhealthy takes the DRA devices behind an event's device IDs out of the pool and
// republishes. An ID of a replica or share stands for its GPU (or, for a replica of a
// MIG device, that MIG device); an ID the node cannot value takes its whole GPU.
func (d *Driver) MarkUnhealthy(ctx context.Context, ev nodeagent.HealthEvent) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	before := len(d.unhealthy)
	for _, id := range ev.IDs {
		d.markID(id, ev.Reason)
	}
	if len(ev.IDs) == 0 {
		d.markGPU(ev.GPU, ev.Reason)
	}
	if len(d.unhealthy) == before {
		return nil
	}
	return d.publishLocked(ctx)
}

// markID marks the DRA device a Gantry device ID stands for.
func (d *Driver) markID(id, reason string) {
	if name, ok := d.inv.DeviceName(id); ok {
		d.mark(name, reason)
		return
	}
	dev, err := devices.ParseDeviceID(id, d.nd)
	if err != nil {
		if gpu, err := devices.GPUOfID(id); err == nil {
			d.markGPU(gpu, reason)
		}
		return
	}
	switch dev.Kind {
	case devices.MIGReplicaDevice:
		if name, ok := d.inv.DeviceName(devices.Device{GPU: dev.GPU, Kind: devices.MIGDevice, Instance: dev.Instance}.ID()); ok {
			d.mark(name, reason)
			return
		}
	case devices.ReplicaDevice, devices.ShareDevice:
		if name, ok := d.inv.DeviceName(devices.GPUID(dev.GPU)); ok {
			d.mark(name, reason)
			return
		}
	}
	d.markGPU(dev.GPU, reason)
}

// markGPU marks every DRA device of a GPU: the GPU itself or its MIG devices.
func (d *Driver) markGPU(gpu int, reason string) {
	for _, g := range d.gpus {
		if g.Index != gpu {
			continue
		}
		if name, ok := d.inv.DeviceName(devices.GPUID(gpu)); ok {
			d.mark(name, reason)
		}
		for _, in := range g.Instances {
			if name, ok := d.inv.DeviceName(devices.Device{GPU: gpu, Kind: devices.MIGDevice, Instance: in}.ID()); ok {
				d.mark(name, reason)
			}
		}
	}
}

func (d *Driver) mark(name, reason string) {
	if _, done := d.unhealthy[name]; !done {
		d.unhealthy[name] = reason
	}
}

// Unhealthy lists the DRA devices taken out of the pool, sorted.
func (d *Driver) Unhealthy() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.unhealthy))
	for name := range d.unhealthy {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Resources are the node's pool as published now: the inventory's devices less the
// unhealthy ones, in slices of at most resourcev1.ResourceSliceMaxDevices.
func (d *Driver) Resources() resourceslice.DriverResources {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.resourcesLocked()
}

func (d *Driver) resourcesLocked() resourceslice.DriverResources {
	var devs []resourcev1.Device
	for _, dev := range d.inv.Devices() {
		if _, bad := d.unhealthy[dev.Name]; !bad {
			devs = append(devs, dev)
		}
	}
	var slices []resourceslice.Slice
	for len(devs) > resourcev1.ResourceSliceMaxDevices {
		slices = append(slices, resourceslice.Slice{Devices: devs[:resourcev1.ResourceSliceMaxDevices]})
		devs = devs[resourcev1.ResourceSliceMaxDevices:]
	}
	slices = append(slices, resourceslice.Slice{Devices: devs})
	return resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{d.node: {Slices: slices}}}
}

// publishLocked hands the pool to the publisher, if there is one yet.
func (d *Driver) publishLocked(ctx context.Context) error {
	if d.pub == nil {
		return nil
	}
	if err := d.pub.PublishResources(ctx, d.resourcesLocked()); err != nil {
		return fmt.Errorf("publishing node %s's ResourceSlices: %w", d.node, err)
	}
	return nil
}
