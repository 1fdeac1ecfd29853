package dra

import (
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// gpuFacts are what one gpu or mig device says about its GPU.
type gpuFacts struct {
	index        int
	uuid         string
	model        devices.Model
	nvlinkDomain int
	pcieSwitch   *int
	pcieRoot     string
}

// readDevice reads one device into its GPU's record, or leaves it out with a reason.
func (r *sliceReader) readDevice(slice string, d *resourcev1.Device) error {
	typ, _, err := stringAttr(d, AttrType)
	if err != nil {
		return err
	}
	if typ != DeviceTypeGPU && typ != DeviceTypeMIG {
		r.ignore(slice, d, fmt.Sprintf("type %q is not %s or %s", typ, DeviceTypeGPU, DeviceTypeMIG))
		return nil
	}
	name, ok := parseDeviceName(d.Name)
	if !ok || name.mig != (typ == DeviceTypeMIG) {
		r.ignore(slice, d, fmt.Sprintf("a %s device named neither gpu-<minor> nor gpu-<minor>-mig-<profile>-<id>-<start>", typ))
		return nil
	}
	f, known, err := readGPUFacts(d, name)
	if err != nil {
		return err
	}
	if !known {
		r.ignore(slice, d, "GPU model unknown: no gantry.dev/model, no productName the catalog knows and no memory capacity")
		return nil
	}
	rec, err := r.record(f, slice+"/"+d.Name)
	if err != nil {
		return err
	}
	if len(d.ConsumesCounters) > 0 {
		return rec.addPartitionable(d, name.mig, slice+"/"+d.Name)
	}
	if !name.mig {
		return rec.addWhole(slice + "/" + d.Name)
	}
	return rec.addInstance(d, name.start)
}

// record is the GPU's record, created on first sight and checked against what other
// devices said of the GPU since.
func (r *sliceReader) record(f gpuFacts, where string) (*gpuRecord, error) {
	rec, ok := r.gpus[f.index]
	if !ok {
		rec = &gpuRecord{gpuFacts: f, where: where}
		r.gpus[f.index] = rec
		return rec, nil
	}
	switch {
	case rec.uuid != f.uuid:
		return nil, fmt.Errorf("GPU %d has UUID %q here but %q in %s", f.index, f.uuid, rec.uuid, rec.where)
	case rec.model.ID != f.model.ID:
		return nil, fmt.Errorf("GPU %d is a %s here but a %s in %s", f.index, f.model.ID, rec.model.ID, rec.where)
	case rec.nvlinkDomain != f.nvlinkDomain:
		return nil, fmt.Errorf("GPU %d is in NVLink domain %d here but %d in %s", f.index, f.nvlinkDomain, rec.nvlinkDomain, rec.where)
	}
	return rec, nil
}

// addPartitionable records a device drawing on shared counters (KEP-4815): its GPU is
// partitionable. A mig device of such a GPU is one of its placements, an option the
// allocator may carve, not an instance: it is dropped (on purpose, so not listed as
// ignored); the GPU comes back with its layout chosen at allocation time.
func (rec *gpuRecord) addPartitionable(d *resourcev1.Device, mig bool, where string) error {
	if len(rec.instances) > 0 {
		return fmt.Errorf("GPU %d draws on shared counters and also has fixed MIG devices (first in %s)", rec.index, rec.where)
	}
	if mig {
		if _, err := rec.placementProfile(d); err != nil {
			return err
		}
		rec.partitionable = true
		return nil
	}
	if err := rec.addWhole(where); err != nil {
		return err
	}
	rec.partitionable = true
	return nil
}

// addWhole records the GPU offered whole.
func (rec *gpuRecord) addWhole(where string) error {
	if len(rec.instances) > 0 {
		return fmt.Errorf("GPU %d is offered whole and also has MIG devices (first in %s)", rec.index, rec.where)
	}
	if rec.whole {
		return fmt.Errorf("GPU %d is offered whole twice (also %s)", rec.index, rec.where)
	}
	rec.whole = true
	return nil
}

// addInstance records one MIG instance: its profile from the profile attribute, its
// start slot from the device name.
func (rec *gpuRecord) addInstance(d *resourcev1.Device, start int) error {
	if rec.partitionable {
		return fmt.Errorf("GPU %d has fixed MIG devices and also draws on shared counters (%s)", rec.index, rec.where)
	}
	if rec.whole {
		return fmt.Errorf("GPU %d has MIG devices and is also offered whole (%s)", rec.index, rec.where)
	}
	p, err := rec.placementProfile(d)
	if err != nil {
		return err
	}
	rec.instances = append(rec.instances, devices.Instance{Profile: p.Name, Start: start})
	return nil
}

// placementProfile is the MIG profile a mig device names, which its GPU's model must
// have.
func (rec *gpuRecord) placementProfile(d *resourcev1.Device) (devices.Profile, error) {
	profile, ok, err := stringAttr(d, AttrProfile)
	if err != nil {
		return devices.Profile{}, err
	}
	if !ok {
		return devices.Profile{}, fmt.Errorf("attribute %s: missing (a mig device names its MIG profile)", AttrProfile)
	}
	p, ok := rec.model.Profile(profile)
	if !ok {
		return devices.Profile{}, fmt.Errorf("attribute %s: %s has no MIG profile %q (profiles: %v)", AttrProfile, rec.model.ID, profile, rec.model.ProfileNames())
	}
	return p, nil
}

// readGPUFacts reads what a device says about its GPU; known is false when the model
// cannot be told.
func readGPUFacts(d *resourcev1.Device, name parsedName) (gpuFacts, bool, error) {
	f := gpuFacts{index: name.gpu}
	uuidAttr, indexAttr := AttrUUID, AttrIndex
	if name.mig {
		uuidAttr, indexAttr = AttrParentUUID, AttrParentIndex
	}
	var err error
	if f.uuid, _, err = stringAttr(d, uuidAttr); err != nil {
		return f, false, err
	}
	if idx, ok, err := intAttr(d, indexAttr); err != nil {
		return f, false, err
	} else if ok && idx != name.gpu {
		return f, false, fmt.Errorf("attribute %s: %d, but the name says GPU %d", indexAttr, idx, name.gpu)
	}
	if f.nvlinkDomain, _, err = intAttr(d, AttrNVLinkDomain); err != nil {
		return f, false, err
	}
	if sw, ok, err := intAttr(d, AttrPCIeSwitch); err != nil {
		return f, false, err
	} else if ok {
		f.pcieSwitch = &sw
	}
	if f.pcieRoot, _, err = stringAttr(d, AttrPCIeRoot); err != nil {
		return f, false, err
	}
	var known bool
	f.model, known, err = readModel(d, name.mig)
	return f, known, err
}

// readModel finds the GPU's model: Gantry's model attribute, else the product name,
// else (a whole GPU) a generic model of its memory capacity.
func readModel(d *resourcev1.Device, mig bool) (devices.Model, bool, error) {
	id, ok, err := stringAttr(d, AttrModel)
	if err != nil {
		return devices.Model{}, false, err
	}
	if ok {
		m, err := devices.LookupModel(id)
		if err != nil {
			return devices.Model{}, false, fmt.Errorf("attribute %s: %w", AttrModel, err)
		}
		return m, true, nil
	}
	product, _, err := stringAttr(d, AttrProductName)
	if err != nil {
		return devices.Model{}, false, err
	}
	if m, err := devices.LookupModel(product); product != "" && err == nil {
		return m, true, nil
	}
	c, ok := d.Capacity[CapacityMemory]
	if mig || !ok || c.Value.Value() <= 0 {
		return devices.Model{}, false, nil
	}
	m, err := devices.GenericModel(product, resources.MiB(c.Value.Value()>>20))
	return m, err == nil, err
}

// stringAttr reads a string attribute; a value of another type is an error.
func stringAttr(d *resourcev1.Device, name resourcev1.QualifiedName) (string, bool, error) {
	a, ok := d.Attributes[name]
	if !ok {
		return "", false, nil
	}
	if a.StringValue == nil {
		return "", false, fmt.Errorf("attribute %s: want a string value", name)
	}
	return *a.StringValue, true, nil
}

// intAttr reads an int attribute; a value of another type is an error.
func intAttr(d *resourcev1.Device, name resourcev1.QualifiedName) (int, bool, error) {
	a, ok := d.Attributes[name]
	if !ok {
		return 0, false, nil
	}
	if a.IntValue == nil {
		return 0, false, fmt.Errorf("attribute %s: want an int value", name)
	}
	return int(*a.IntValue), true, nil
}
