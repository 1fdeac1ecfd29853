package dra

import (
	"fmt"
	"sort"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// IgnoredDevice is a device of the driver's slices that GPUsFromSlices left out, and why.
type IgnoredDevice struct {
	Slice, Device, Reason string
}

// IgnoredDevicesError says which devices GPUsFromSlices left out. It comes back with
// the GPUs it did read, which are complete without them: a caller that accepts a node
// whose slices carry devices Gantry does not model (NVIDIA's VFIO devices) checks for it
// with errors.As and goes on.
type IgnoredDevicesError struct {
	Node    string
	Devices []IgnoredDevice
}

func (e *IgnoredDevicesError) Error() string {
	parts := make([]string, len(e.Devices))
	for i, d := range e.Devices {
		parts[i] = fmt.Sprintf("ResourceSlice %s device %s: %s", d.Slice, d.Device, d.Reason)
	}
	return fmt.Sprintf("node %s: %d %s devices ignored: %s", e.Node, len(e.Devices), DriverName, strings.Join(parts, "; "))
}

// GPUsFromSlices reads node's GPUs back from the ResourceSlices of a node dump: the
// slices of DriverName whose nodeName is node, the newest generation of each pool. It
// inverts NodeInventory.Slices (model, index, UUID, NVLink domain, PCIe switch and MIG
// layout come back as they were) and reads slices NVIDIA's driver published, taking the
// model from productName (or, failing that, a generic model of the memory capacity) and
// PCIe switches from resource.kubernetes.io/pcieRoot.
//
// A GPU whose devices draw on shared counters (KEP-4815) is partitionable: it comes back
// with PartitionSharing and no instances. Its counter-consuming mig devices are the
// placements the allocator may carve, not instances, so they are dropped (and not
// listed as ignored).
//
// A device name given twice in one pool, a malformed gpu or mig device, conflicting
// facts about one GPU or a MIG layout the model rejects is an error naming the slice and
// device, with no GPUs. Devices of other types are left out and listed in an
// *IgnoredDevicesError returned with the GPUs.
func GPUsFromSlices(node string, slices []resourcev1.ResourceSlice) ([]devices.GPU, error) {
	r := &sliceReader{node: node, gpus: map[int]*gpuRecord{}}
	for _, s := range currentSlices(node, slices) {
		if err := r.readSlice(s); err != nil {
			return nil, err
		}
	}
	gpus, err := r.finish()
	if err != nil {
		return nil, err
	}
	if len(r.ignored) > 0 {
		return gpus, &IgnoredDevicesError{Node: node, Devices: r.ignored}
	}
	return gpus, nil
}

// currentSlices are the driver's slices for node in the newest generation of their pool
// (older generations are being replaced, as the DRA allocator also assumes), by name.
func currentSlices(node string, slices []resourcev1.ResourceSlice) []*resourcev1.ResourceSlice {
	newest := map[string]int64{}
	var mine []*resourcev1.ResourceSlice
	for i := range slices {
		s := &slices[i]
		if s.Spec.Driver != DriverName || s.Spec.NodeName == nil || *s.Spec.NodeName != node {
			continue
		}
		mine = append(mine, s)
		if g, ok := newest[s.Spec.Pool.Name]; !ok || s.Spec.Pool.Generation > g {
			newest[s.Spec.Pool.Name] = s.Spec.Pool.Generation
		}
	}
	var out []*resourcev1.ResourceSlice
	for _, s := range mine {
		if s.Spec.Pool.Generation == newest[s.Spec.Pool.Name] {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sliceReader gathers GPUs from a node's slices.
type sliceReader struct {
	node    string
	gpus    map[int]*gpuRecord
	ignored []IgnoredDevice
	// seen maps pool/device to the slice that named it first.
	seen map[string]string
}

// gpuRecord is what the devices of one GPU say about it; where says which device said
// it first, for conflict errors.
type gpuRecord struct {
	gpuFacts // as the first device of the GPU said them
	whole    bool
	// partitionable: the GPU's devices draw on shared counters, so its MIG layout is
	// chosen at allocation time (PartitionSharing).
	partitionable bool
	instances     []devices.Instance
	where         string
}

// readSlice reads one slice's devices.
func (r *sliceReader) readSlice(s *resourcev1.ResourceSlice) error {
	if r.seen == nil {
		r.seen = map[string]string{}
	}
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		key := s.Spec.Pool.Name + "/" + d.Name
		if first, dup := r.seen[key]; dup {
			return fmt.Errorf("ResourceSlice %s: device %s of pool %s is also in ResourceSlice %s: device names must be unique in a pool",
				s.Name, d.Name, s.Spec.Pool.Name, first)
		}
		r.seen[key] = s.Name
		if err := r.readDevice(s.Name, d); err != nil {
			return fmt.Errorf("ResourceSlice %s: device %s: %w", s.Name, d.Name, err)
		}
	}
	return nil
}

// ignore records a device left out.
func (r *sliceReader) ignore(slice string, d *resourcev1.Device, reason string) {
	r.ignored = append(r.ignored, IgnoredDevice{Slice: slice, Device: d.Name, Reason: reason})
}

// finish checks every GPU and returns them by index.
func (r *sliceReader) finish() ([]devices.GPU, error) {
	switches := pcieRootSwitches(r.gpus)
	out := make([]devices.GPU, 0, len(r.gpus))
	for _, rec := range r.gpus {
		g, err := rec.gpu(switches)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", r.node, err)
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// pcieRootSwitches numbers the distinct PCIe roots of GPUs that carry no PCIe switch
// attribute, in sorted order, so GPUs under one root share a switch number.
func pcieRootSwitches(gpus map[int]*gpuRecord) map[string]int {
	var roots []string
	for _, g := range gpus {
		if g.pcieSwitch == nil && g.pcieRoot != "" {
			roots = append(roots, g.pcieRoot)
		}
	}
	sort.Strings(roots)
	out := map[string]int{}
	for _, root := range roots {
		if _, ok := out[root]; !ok {
			out[root] = len(out)
		}
	}
	return out
}

// gpu is the GPU the record describes, its MIG layout checked against its model.
func (rec *gpuRecord) gpu(switches map[string]int) (devices.GPU, error) {
	g := devices.GPU{Index: rec.index, UUID: rec.uuid, Model: rec.model.ID, NVLinkDomain: rec.nvlinkDomain,
		Sharing: devices.Sharing{Mode: devices.Exclusive}, Healthy: true}
	if rec.pcieSwitch != nil {
		g.PCIeSwitch = *rec.pcieSwitch
	} else {
		g.PCIeSwitch = switches[rec.pcieRoot]
	}
	if rec.partitionable {
		g.Sharing = PartitionSharing()
		return g, nil
	}
	if len(rec.instances) == 0 {
		return g, nil
	}
	sort.Slice(rec.instances, func(i, j int) bool { return rec.instances[i].Start < rec.instances[j].Start })
	if err := rec.model.ValidateLayout(rec.instances); err != nil {
		return devices.GPU{}, fmt.Errorf("GPU %d (%s): MIG devices: %w", rec.index, rec.where, err)
	}
	profiles := make([]string, len(rec.instances))
	for i, in := range rec.instances {
		profiles[i] = in.Profile
	}
	g.Instances = rec.instances
	g.Sharing = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutCustom,
		CustomProfiles: [][]string{profiles}}
	return g, nil
}
