package dra

import (
	"fmt"
	"slices"
	"sort"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// NodeInventory is one node's DRA devices, derived from the same []devices.GPU that
// drives the extended-resource path: a GPU whose MIG layout is empty is one device of
// type gpu, a GPU with MIG instances is one device of type mig per instance (as NVIDIA's
// driver publishes them with MIG enabled; the GPU itself is then not offered whole).
// Unhealthy GPUs publish nothing, so republishing the slice takes them away (device
// taints need the DRADeviceTaints feature gate in Kubernetes 1.34); their names still
// translate, for allocations made before they failed. A GPU whose MIG layout is chosen
// at allocation time is a partitionable device (partition.go): the GPU whole and every
// placement, drawing on one counter set.
type NodeInventory struct {
	node    string
	devices []resourcev1.Device
	// byID maps Gantry device IDs to DRA names, byName the reverse.
	byID   map[string]string
	byName map[string]string
}

// NewNodeInventory derives node's DRA devices from its GPUs. Every GPU's model must be
// in the catalog (or a generic model's ID), every MIG layout valid for its model, and
// GPU indexes unique.
func NewNodeInventory(node string, gpus []devices.GPU, opts ...Option) (*NodeInventory, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	driver, cuda, err := o.facts.check()
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", node, err)
	}
	inv := &NodeInventory{node: node, byID: map[string]string{}, byName: map[string]string{}}
	ordered := slices.Clone(gpus)
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].Index < ordered[j].Index })
	for _, g := range ordered {
		f := deviceFacts{driver: driver, cuda: cuda, gpu: o.facts.GPUs[g.Index]}
		if err := inv.addGPU(g, f); err != nil {
			return nil, fmt.Errorf("node %s: GPU %d: %w", node, g.Index, err)
		}
	}
	return inv, nil
}

// addGPU adds one GPU's devices.
func (inv *NodeInventory) addGPU(g devices.GPU, f deviceFacts) error {
	m, err := devices.LookupModel(string(g.Model))
	if err != nil {
		return err
	}
	if err := m.ValidateLayout(g.Instances); err != nil {
		return err
	}
	if g.Sharing.DynamicMIG() {
		return inv.addPartitionable(g, m, f)
	}
	if len(g.Instances) == 0 {
		return inv.add(g, buildDevice(g, m, nil, f), devices.Device{GPU: g.Index, Kind: devices.WholeGPU})
	}
	instances := slices.Clone(g.Instances)
	sort.Slice(instances, func(i, j int) bool { return instances[i].Start < instances[j].Start })
	for i := range instances {
		d := buildDevice(g, m, &instances[i], f)
		if err := inv.add(g, d, devices.Device{GPU: g.Index, Kind: devices.MIGDevice, Instance: instances[i]}); err != nil {
			return err
		}
	}
	return nil
}

// add records one device under its Gantry ID; a healthy GPU's devices are published.
func (inv *NodeInventory) add(g devices.GPU, d resourcev1.Device, gd devices.Device) error {
	id := gd.ID()
	if other, dup := inv.byName[d.Name]; dup {
		return fmt.Errorf("device name %s is given to both %s and %s (duplicate GPU index?)", d.Name, other, id)
	}
	inv.byID[id], inv.byName[d.Name] = d.Name, id
	if g.Healthy {
		inv.devices = append(inv.devices, d)
	}
	return nil
}

// Node is the node the inventory describes.
func (inv *NodeInventory) Node() string { return inv.node }

// Devices are the published devices, by GPU index and then MIG start slot. The caller
// gets its own copy.
func (inv *NodeInventory) Devices() []resourcev1.Device {
	out := make([]resourcev1.Device, len(inv.devices))
	for i := range inv.devices {
		inv.devices[i].DeepCopyInto(&out[i])
	}
	return out
}

// DeviceName is the DRA device name of a Gantry device ID ("GPU-3" -> "gpu-3",
// "GPU-3/mig-1g.10gb@4" -> "gpu-3-mig-1g10gb-19-4"); false for IDs of devices DRA does
// not publish (replicas, shares) or that the node lacks.
func (inv *NodeInventory) DeviceName(id string) (string, bool) {
	n, ok := inv.byID[id]
	return n, ok
}

// DeviceID is the Gantry device ID of a DRA device name; false for names the node's
// inventory lacks.
func (inv *NodeInventory) DeviceID(name string) (string, bool) {
	id, ok := inv.byName[name]
	return id, ok
}

// Slices are the ResourceSlices the node publishes: one pool named after the node,
// generation 1, split in slices of at most resourcev1.ResourceSliceMaxDevices devices.
// A node with partitionable GPUs keeps each GPU's devices beside its counter set
// (partitionSlices).
// A node without devices publishes one empty slice, so the pool says it has none.
func (inv *NodeInventory) Slices() []resourcev1.ResourceSlice {
	if out, ok := inv.partitionSlices(); ok {
		return out
	}
	devs := inv.Devices()
	var chunks [][]resourcev1.Device
	for len(devs) > resourcev1.ResourceSliceMaxDevices {
		chunks = append(chunks, devs[:resourcev1.ResourceSliceMaxDevices])
		devs = devs[resourcev1.ResourceSliceMaxDevices:]
	}
	chunks = append(chunks, devs)
	out := make([]resourcev1.ResourceSlice, len(chunks))
	for i, c := range chunks {
		out[i] = inv.slice(i, len(chunks), c)
	}
	return out
}

// slice is the i-th of n slices of the node's pool.
func (inv *NodeInventory) slice(i, n int, devs []resourcev1.Device) resourcev1.ResourceSlice {
	name := inv.node + "-" + DriverName
	if n > 1 {
		name = fmt.Sprintf("%s-%d", name, i)
	}
	return resourcev1.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{APIVersion: resourcev1.SchemeGroupVersion.String(), Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   DriverName,
			Pool:     resourcev1.ResourcePool{Name: inv.node, Generation: 1, ResourceSliceCount: int64(n)},
			NodeName: ptr.To(inv.node),
			Devices:  devs,
		},
	}
}
