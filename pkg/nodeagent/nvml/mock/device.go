package mock

import (
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
)

// link is one NVLink link: up or down, and the PCI address at its far end.
type link struct {
	up     bool
	remote string
}

// Device is one mock A100.
type Device struct {
	srv        *Server
	index      int
	bus        uint32
	uuid       string
	name       string
	migCurrent int
	migPending int
	gis        map[uint32]*GpuInstance
	links      [A100NVLinks]link
	registered map[*EventSet]uint64
}

var _ nvml.Device = (*Device)(nil)

func (d *Device) lock() func() {
	d.srv.mu.Lock()
	return d.srv.mu.Unlock
}

// GetIndex is the NVML index.
func (d *Device) GetIndex() (int, nvml.Return) { return d.index, nvml.SUCCESS }

// GetName is "NVIDIA A100-SXM4-40GB" unless SetName changed it.
func (d *Device) GetName() (string, nvml.Return) {
	defer d.lock()()
	return d.name, nvml.SUCCESS
}

// GetUUID is the GPU's UUID.
func (d *Device) GetUUID() (string, nvml.Return) { return d.uuid, nvml.SUCCESS }

// GetMemoryInfo reports the whole framebuffer free.
func (d *Device) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	total := uint64(A100MemoryMiB) << 20
	return nvml.Memory{Total: total, Free: total}, nvml.SUCCESS
}

// GetPciInfo returns the DGX A100 address of the GPU.
func (d *Device) GetPciInfo() (nvml.PciInfo, nvml.Return) {
	return nvml.PciInfo{BusID: busID(d.bus), Bus: d.bus, PciDeviceID: 0x20B010DE}, nvml.SUCCESS
}

// GetMigMode returns the current and pending mode.
func (d *Device) GetMigMode() (int, int, nvml.Return) {
	defer d.lock()()
	return d.migCurrent, d.migPending, nvml.SUCCESS
}

// SetMigMode switches MIG on or off at once (no GPU reset needed in the mock). Turning
// it off while GPU instances exist is ERROR_IN_USE, as on the hardware.
func (d *Device) SetMigMode(mode int) (nvml.Return, nvml.Return) {
	defer d.lock()()
	if mode != nvml.DEVICE_MIG_ENABLE && mode != nvml.DEVICE_MIG_DISABLE {
		return nvml.ERROR_INVALID_ARGUMENT, nvml.ERROR_INVALID_ARGUMENT
	}
	if mode == nvml.DEVICE_MIG_DISABLE && len(d.gis) > 0 {
		return nvml.ERROR_IN_USE, nvml.ERROR_IN_USE
	}
	d.migCurrent, d.migPending = mode, mode
	return nvml.SUCCESS, nvml.SUCCESS
}

// GetMaxMigDeviceCount is 7 on an A100.
func (d *Device) GetMaxMigDeviceCount() (int, nvml.Return) { return a100ComputeSlices, nvml.SUCCESS }

// GetMigDeviceHandleByIndex returns the index-th MIG device (compute instance), ordered
// by GPU-instance then compute-instance ID.
func (d *Device) GetMigDeviceHandleByIndex(index int) (nvml.Device, nvml.Return) {
	defer d.lock()()
	if d.migCurrent != nvml.DEVICE_MIG_ENABLE {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	i := 0
	for _, gi := range d.sortedGIs() {
		for _, ci := range gi.sortedCIs() {
			if i == index {
				return &migDevice{parent: d, gi: gi, ci: ci}, nvml.SUCCESS
			}
			i++
		}
	}
	return nil, nvml.ERROR_NOT_FOUND
}

// IsMigDeviceHandle is false for a GPU.
func (d *Device) IsMigDeviceHandle() (bool, nvml.Return) { return false, nvml.SUCCESS }

// GetDeviceHandleFromMigDeviceHandle is invalid on a GPU.
func (d *Device) GetDeviceHandleFromMigDeviceHandle() (nvml.Device, nvml.Return) {
	return nil, nvml.ERROR_INVALID_ARGUMENT
}

// GetGpuInstanceId is invalid on a GPU.
func (d *Device) GetGpuInstanceId() (int, nvml.Return) { return 0, nvml.ERROR_INVALID_ARGUMENT }

// GetComputeInstanceId is invalid on a GPU.
func (d *Device) GetComputeInstanceId() (int, nvml.Return) { return 0, nvml.ERROR_INVALID_ARGUMENT }

// GetGpuInstanceProfileInfo describes an A100 profile; others are not supported.
func (d *Device) GetGpuInstanceProfileInfo(profile int) (nvml.GpuInstanceProfileInfo, nvml.Return) {
	p, ok := findProfile(profile)
	if !ok {
		return nvml.GpuInstanceProfileInfo{}, nvml.ERROR_NOT_SUPPORTED
	}
	return p.info(), nvml.SUCCESS
}

// GetGpuInstancePossiblePlacements lists every placement of the profile (NVML's
// static list, independent of what is already placed).
func (d *Device) GetGpuInstancePossiblePlacements(info *nvml.GpuInstanceProfileInfo) ([]nvml.GpuInstancePlacement, nvml.Return) {
	if info == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	p, ok := findProfile(int(info.ID))
	if !ok {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	out := make([]nvml.GpuInstancePlacement, len(p.starts))
	for i, s := range p.starts {
		out[i] = nvml.GpuInstancePlacement{Start: s, Size: p.size}
	}
	return out, nvml.SUCCESS
}

// GetGpuInstances lists the live instances of a profile.
func (d *Device) GetGpuInstances(info *nvml.GpuInstanceProfileInfo) ([]nvml.GpuInstance, nvml.Return) {
	defer d.lock()()
	if info == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	if d.migCurrent != nvml.DEVICE_MIG_ENABLE {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	var out []nvml.GpuInstance
	for _, gi := range d.sortedGIs() {
		if gi.profile.id == int(info.ID) {
			out = append(out, gi)
		}
	}
	return out, nvml.SUCCESS
}

// GetGpuInstanceById finds a live GPU instance.
func (d *Device) GetGpuInstanceById(id int) (nvml.GpuInstance, nvml.Return) {
	defer d.lock()()
	gi, ok := d.gis[uint32(id)]
	if !ok {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return gi, nvml.SUCCESS
}

// GetNvLinkState says whether a link is up.
func (d *Device) GetNvLinkState(l int) (nvml.EnableState, nvml.Return) {
	defer d.lock()()
	if l < 0 || l >= len(d.links) {
		return nvml.FEATURE_DISABLED, nvml.ERROR_INVALID_ARGUMENT
	}
	if d.links[l].up {
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	return nvml.FEATURE_DISABLED, nvml.SUCCESS
}

// GetNvLinkRemotePciInfo is the NVSwitch at the far end of a link.
func (d *Device) GetNvLinkRemotePciInfo(l int) (nvml.PciInfo, nvml.Return) {
	defer d.lock()()
	if l < 0 || l >= len(d.links) {
		return nvml.PciInfo{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return nvml.PciInfo{BusID: d.links[l].remote}, nvml.SUCCESS
}

// GetSupportedEventTypes: ECC, XID, P-state, clocks, MIG config changes.
func (d *Device) GetSupportedEventTypes() (uint64, nvml.Return) {
	return nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError | nvml.EventTypePState |
		nvml.EventTypeXidCriticalError | nvml.EventTypeClock | nvml.EventTypeMigConfigChange, nvml.SUCCESS
}

// RegisterEvents subscribes set to the GPU's events of the given types.
func (d *Device) RegisterEvents(types uint64, set nvml.EventSet) nvml.Return {
	es, ok := set.(*EventSet)
	if !ok || es == nil {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	supported, _ := d.GetSupportedEventTypes()
	if types&^supported != 0 {
		return nvml.ERROR_NOT_SUPPORTED
	}
	defer d.lock()()
	if d.registered == nil {
		d.registered = map[*EventSet]uint64{}
	}
	d.registered[es] |= types
	return nvml.SUCCESS
}
