package dra

import (
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Partitionable GPUs (KEP-4815, resource.k8s.io/v1 shared counters): a GPU whose MIG
// layout is chosen at allocation time (devices.LayoutDynamic) publishes one counter set
// and, drawing on it, the GPU whole and one mig device per placement (each MIG profile
// at each start slot), named as fixed MIG devices are. The counters encode the
// placement rules, so the devices kube-scheduler's allocator can give together are
// exactly the layouts devices.Model.ValidateLayout accepts:
//
//	memory-slice-<i>   1 each         a placement takes the slices it covers
//	compute-slices     the GPU's      a placement takes its profile's
//	memory             see below      a placement takes its memory (bytes)
//	media-extensions   1              a +me placement takes it (one +me per GPU)
//	media-engines      memory slices  a placement with media takes 1, +me.all all
//
// media-extensions and media-engines are published only for models with +me and
// +me.all profiles. The whole GPU takes every counter, so it excludes every placement
// and each placement excludes it. The allocation names the placement device; Gantry's
// device model carves the same instance (devices.NodeDevices.Commit).
const (
	counterMemory          = "memory"
	counterComputeSlices   = "compute-slices"
	counterMemorySlice     = "memory-slice-"
	counterMediaExtensions = "media-extensions"
	counterMediaEngines    = "media-engines"
)

// counterSetName is GPU index's counter set, as NVIDIA's driver names it.
func counterSetName(index int) string { return fmt.Sprintf("gpu-%d-counter-set", index) }

// partitionCounters are the counters of a model-m GPU: what the whole GPU consumes.
func partitionCounters(m devices.Model) map[string]resourcev1.Counter {
	g := m.MIG
	out := map[string]resourcev1.Counter{
		counterMemory:        bytesCounter(counterMemoryMiB(m)),
		counterComputeSlices: countCounter(g.ComputeSlices),
	}
	for s := range g.MemorySlices {
		out[fmt.Sprintf("%s%d", counterMemorySlice, s)] = countCounter(1)
	}
	media, allMedia := mediaKinds(m)
	if media {
		out[counterMediaExtensions] = countCounter(1)
	}
	if allMedia {
		out[counterMediaEngines] = countCounter(g.MemorySlices)
	}
	return out
}

// counterMemoryMiB is the memory counter's value: the GPU's memory, or more where some
// valid layout's instances add up to more (profiles named by nominal sizes, such as
// four 1g.24gb on a 94 GB H100 NVL). Every instance holds at most its memory slices'
// share at the densest profile's rate, so a layout never exceeds that rate over all
// slices; memory slices do the placing, this counter is for quota and reading.
func counterMemoryMiB(m devices.Model) resources.MiB {
	g := m.MIG
	most := m.Memory
	for _, p := range g.Profiles {
		perSlice := (p.MemoryMiB + resources.MiB(p.MemorySlices) - 1) / resources.MiB(p.MemorySlices)
		most = max(most, perSlice*resources.MiB(g.MemorySlices))
	}
	return most
}

// mediaKinds reports whether m has +me profiles and +me.all profiles.
func mediaKinds(m devices.Model) (media, allMedia bool) {
	for _, p := range m.MIG.Profiles {
		media = media || p.MediaExtensions
		allMedia = allMedia || p.AllMedia
	}
	return media, allMedia
}

// placementCounters are what instance in of a model-m GPU consumes.
func placementCounters(m devices.Model, in devices.Instance) map[string]resourcev1.Counter {
	p, _ := m.Profile(in.Profile)
	out := map[string]resourcev1.Counter{
		counterMemory:        bytesCounter(p.MemoryMiB),
		counterComputeSlices: countCounter(p.ComputeSlices),
	}
	for s := in.Start; s < in.Start+p.MemorySlices; s++ {
		out[fmt.Sprintf("%s%d", counterMemorySlice, s)] = countCounter(1)
	}
	_, allMedia := mediaKinds(m)
	if p.MediaExtensions {
		out[counterMediaExtensions] = countCounter(1)
	}
	switch {
	case !allMedia || p.NoMedia:
	case p.AllMedia:
		out[counterMediaEngines] = countCounter(m.MIG.MemorySlices)
	default:
		out[counterMediaEngines] = countCounter(1)
	}
	return out
}

func countCounter(n int) resourcev1.Counter {
	return resourcev1.Counter{Value: *resource.NewQuantity(int64(n), resource.DecimalSI)}
}

func bytesCounter(mib resources.MiB) resourcev1.Counter {
	return resourcev1.Counter{Value: *resource.NewQuantity(int64(mib)<<20, resource.BinarySI)}
}

// consuming is a device drawing counters from GPU index's set.
func consuming(d resourcev1.Device, index int, counters map[string]resourcev1.Counter) resourcev1.Device {
	d.ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: counterSetName(index), Counters: counters}}
	return d
}

// partitionDevice is one published device of a partitionable GPU and the Gantry device
// it stands for.
type partitionDevice struct {
	dev    resourcev1.Device
	gantry devices.Device
}

// partitionDevices are partitionable GPU g's devices: the GPU whole, then every
// placement (by profile and start), each consuming its counters.
func partitionDevices(g devices.GPU, m devices.Model, f deviceFacts) []partitionDevice {
	whole := consuming(buildDevice(g, m, nil, f), g.Index, partitionCounters(m))
	out := []partitionDevice{{dev: whole, gantry: devices.Device{GPU: g.Index, Kind: devices.WholeGPU}}}
	for _, in := range m.Placements() {
		d := consuming(buildDevice(g, m, &in, f), g.Index, placementCounters(m, in))
		out = append(out, partitionDevice{dev: d, gantry: devices.Device{GPU: g.Index, Kind: devices.MIGDevice, Instance: in}})
	}
	return out
}

// addPartitionable adds partitionable GPU g's devices to the inventory (addGPU's hook
// for a GPU with a dynamic layout), under their Gantry device IDs ("GPU-0",
// "GPU-0/mig-3g.20gb@4"), so Results names the placement a claim was given.
func (inv *NodeInventory) addPartitionable(g devices.GPU, m devices.Model, f deviceFacts) error {
	if m.MIG == nil {
		return fmt.Errorf("layout %s: GPU model %s does not support MIG", devices.LayoutDynamic, m.ID)
	}
	for _, pd := range partitionDevices(g, m, f) {
		if err := inv.add(g, pd.dev, pd.gantry); err != nil {
			return err
		}
	}
	return nil
}

// PartitionSharing is the sharing of a GPU read back from partitionable devices: MIG
// with the layout chosen at allocation time.
func PartitionSharing() devices.Sharing {
	return devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}
}

// partitionableWhole reports whether d is a partitionable GPU's whole device: a gpu
// device that draws on a counter set (GPUsFromSlices reads its GPU as dynamic).
func partitionableWhole(d *resourcev1.Device) bool {
	t := d.Attributes[AttrType]
	return len(d.ConsumesCounters) > 0 && t.StringValue != nil && *t.StringValue == DeviceTypeGPU
}
