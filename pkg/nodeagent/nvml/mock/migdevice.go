package mock

import "github.com/gantry-sched/gantry/pkg/nodeagent/nvml"

// migDevice is the handle of one MIG device (a compute instance inside a GPU instance).
// Calls that only make sense on a physical GPU return ERROR_NOT_SUPPORTED.
type migDevice struct {
	parent *Device
	gi     *GpuInstance
	ci     *ComputeInstance
}

var _ nvml.Device = (*migDevice)(nil)

func (m *migDevice) GetIndex() (int, nvml.Return) { return m.parent.index, nvml.SUCCESS }
func (m *migDevice) GetName() (string, nvml.Return) {
	return A100Name + " MIG", nvml.SUCCESS
}
func (m *migDevice) GetUUID() (string, nvml.Return) {
	return migUUID(m.parent.uuid, m.gi.id, m.ci.id), nvml.SUCCESS
}
func (m *migDevice) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	total := m.gi.profile.memoryMB << 20
	return nvml.Memory{Total: total, Free: total}, nvml.SUCCESS
}
func (m *migDevice) GetPciInfo() (nvml.PciInfo, nvml.Return) { return m.parent.GetPciInfo() }
func (m *migDevice) GetMigMode() (int, int, nvml.Return) {
	return 0, 0, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) SetMigMode(int) (nvml.Return, nvml.Return) {
	return nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) GetMaxMigDeviceCount() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
func (m *migDevice) GetMigDeviceHandleByIndex(int) (nvml.Device, nvml.Return) {
	return nil, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) IsMigDeviceHandle() (bool, nvml.Return) { return true, nvml.SUCCESS }
func (m *migDevice) GetDeviceHandleFromMigDeviceHandle() (nvml.Device, nvml.Return) {
	return m.parent, nvml.SUCCESS
}
func (m *migDevice) GetGpuInstanceId() (int, nvml.Return)     { return int(m.gi.id), nvml.SUCCESS }
func (m *migDevice) GetComputeInstanceId() (int, nvml.Return) { return int(m.ci.id), nvml.SUCCESS }
func (m *migDevice) GetGpuInstanceProfileInfo(int) (nvml.GpuInstanceProfileInfo, nvml.Return) {
	return nvml.GpuInstanceProfileInfo{}, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) GetGpuInstancePossiblePlacements(*nvml.GpuInstanceProfileInfo) ([]nvml.GpuInstancePlacement, nvml.Return) {
	return nil, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) GetGpuInstances(*nvml.GpuInstanceProfileInfo) ([]nvml.GpuInstance, nvml.Return) {
	return nil, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) GetGpuInstanceById(int) (nvml.GpuInstance, nvml.Return) {
	return nil, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) CreateGpuInstanceWithPlacement(*nvml.GpuInstanceProfileInfo, *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
	return nil, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) GetNvLinkState(int) (nvml.EnableState, nvml.Return) {
	return nvml.FEATURE_DISABLED, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) GetNvLinkRemotePciInfo(int) (nvml.PciInfo, nvml.Return) {
	return nvml.PciInfo{}, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) GetSupportedEventTypes() (uint64, nvml.Return) {
	return 0, nvml.ERROR_NOT_SUPPORTED
}
func (m *migDevice) RegisterEvents(uint64, nvml.EventSet) nvml.Return {
	return nvml.ERROR_NOT_SUPPORTED
}
