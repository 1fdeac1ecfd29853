package testing

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
	resourcev1 "k8s.io/api/resource/v1"
)

// DevicesWrapper builds a node's GPUs (*devices.NodeDevices), whole GPUs unless told
// otherwise: MakeDevices("H100", 8).NVLink(4).MIG(devices.MIGMixed, "all-balanced").Obj().
type DevicesWrapper struct {
	model     string
	count     int
	sharing   devices.Sharing
	perDomain int
	unhealthy []int
}

// MakeDevices starts count GPUs of a catalog model.
func MakeDevices(model string, count int) *DevicesWrapper {
	return &DevicesWrapper{model: model, count: count, sharing: devices.Sharing{Mode: devices.Exclusive}}
}

// NVLink splits the GPUs into NVLink domains of perDomain GPUs (0: one domain).
func (b *DevicesWrapper) NVLink(perDomain int) *DevicesWrapper { b.perDomain = perDomain; return b }

// Sharing sets any sharing mode; the methods below set the usual ones.
func (b *DevicesWrapper) Sharing(s devices.Sharing) *DevicesWrapper { b.sharing = s; return b }

// MIG partitions every GPU by a named layout, or by custom profiles per GPU.
func (b *DevicesWrapper) MIG(strategy devices.MIGStrategy, layout string, custom ...[]string) *DevicesWrapper {
	return b.Sharing(devices.Sharing{Mode: devices.MIG, MIGStrategy: strategy, Layout: layout, CustomProfiles: custom})
}

// TimeSlicing gives every GPU replicas time-sliced replicas.
func (b *DevicesWrapper) TimeSlicing(replicas int, rename bool) *DevicesWrapper {
	return b.Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: replicas, RenameByDefault: rename})
}

// MPS gives every GPU replicas MPS clients, each limited to limit of memory (0: none).
func (b *DevicesWrapper) MPS(replicas int, limit resources.MiB) *DevicesWrapper {
	return b.Sharing(devices.Sharing{Mode: devices.MPS, Replicas: replicas, MPSMemoryLimit: limit})
}

// Replicate adds NVIDIA's per-resource replication to the sharing set so far: after
// TimeSlicing(0, rename) or MPS(0, 0), whole GPUs one entry at a time (a subset of them);
// after MIG, time-sliced MIG devices. Replicated builds the entries.
func (b *DevicesWrapper) Replicate(entries ...devices.ReplicatedResource) *DevicesWrapper {
	b.sharing.Resources = append(b.sharing.Resources, entries...)
	return b
}

// Replicated is one per-resource entry: name's devices as replicas each, the devices
// selected by index ("1", "0:2") or all when none are given.
func Replicated(name resources.Name, replicas int, devs ...string) devices.ReplicatedResource {
	return devices.ReplicatedResource{Name: name, Replicas: replicas, Devices: devs}
}

// Fractional lets pods ask for fractions of a GPU.
func (b *DevicesWrapper) Fractional() *DevicesWrapper {
	return b.Sharing(devices.Sharing{Mode: devices.Fractional})
}

// Unhealthy marks the GPUs at these indexes unhealthy.
func (b *DevicesWrapper) Unhealthy(idx ...int) *DevicesWrapper { b.unhealthy = idx; return b }

// Obj builds the devices; it panics if the model, layout or sharing is not valid.
func (b *DevicesWrapper) Obj() *devices.NodeDevices {
	n, err := devices.NewNodeDevices(b.gpus())
	if err != nil {
		panic(fmt.Sprintf("%d %s GPUs: %v", b.count, b.model, err))
	}
	return n
}

// Slices are the ResourceSlices NVIDIA's DRA driver publishes for these GPUs on node
// (what Gantry's node agent publishes); it panics where Obj does.
func (b *DevicesWrapper) Slices(node string) []resourcev1.ResourceSlice {
	inv, err := dra.NewNodeInventory(node, b.gpus())
	if err != nil {
		panic(fmt.Sprintf("node %s: %d %s GPUs: %v", node, b.count, b.model, err))
	}
	return inv.Slices()
}

// gpus builds the GPUs; it panics if the model, layout or sharing is not valid.
func (b *DevicesWrapper) gpus() []devices.GPU {
	m, err := devices.LookupModel(b.model)
	if err != nil {
		panic(err)
	}
	gpus, err := devices.NewGPUs(m, b.count, b.sharing, b.perDomain)
	if err != nil {
		panic(fmt.Sprintf("%d %s GPUs: %v", b.count, b.model, err))
	}
	for _, i := range b.unhealthy {
		gpus[i].Healthy = false
	}
	return gpus
}
