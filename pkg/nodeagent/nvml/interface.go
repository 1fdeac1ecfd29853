package nvml

import "errors"

// Interface is the library as a whole (go-nvml's nvml.Interface, the subset Gantry uses).
// Init must succeed before any other call and be balanced by Shutdown.
type Interface interface {
	Init() Return
	Shutdown() Return
	// SystemGetDriverVersion is the kernel driver version, e.g. "535.129.03".
	SystemGetDriverVersion() (string, Return)
	// SystemGetCudaDriverVersion is the CUDA version the driver supports, encoded as
	// 1000*major + 10*minor (12020 = 12.2).
	SystemGetCudaDriverVersion() (int, Return)
	DeviceGetCount() (int, Return)
	DeviceGetHandleByIndex(index int) (Device, Return)
	EventSetCreate() (EventSet, Return)
}

// Device is a physical GPU, or a MIG device when IsMigDeviceHandle says so.
type Device interface {
	GetIndex() (int, Return)
	GetName() (string, Return)
	// GetUUID is "GPU-<uuid>" for a GPU and "MIG-<uuid>" for a MIG device.
	GetUUID() (string, Return)
	GetMemoryInfo() (Memory, Return)
	GetPciInfo() (PciInfo, Return)

	// GetMigMode returns the current and pending MIG mode (DEVICE_MIG_*);
	// ERROR_NOT_SUPPORTED on GPUs without MIG.
	GetMigMode() (current, pending int, ret Return)
	// SetMigMode requests a mode; activation is the status of applying it now (a GPU
	// reset may be needed, reported as a non-success activation).
	SetMigMode(mode int) (activation Return, ret Return)
	GetMaxMigDeviceCount() (int, Return)
	GetMigDeviceHandleByIndex(index int) (Device, Return)
	IsMigDeviceHandle() (bool, Return)
	GetDeviceHandleFromMigDeviceHandle() (Device, Return)
	GetGpuInstanceId() (int, Return)
	GetComputeInstanceId() (int, Return)

	GetGpuInstanceProfileInfo(profile int) (GpuInstanceProfileInfo, Return)
	GetGpuInstancePossiblePlacements(info *GpuInstanceProfileInfo) ([]GpuInstancePlacement, Return)
	GetGpuInstances(info *GpuInstanceProfileInfo) ([]GpuInstance, Return)
	GetGpuInstanceById(id int) (GpuInstance, Return)
	CreateGpuInstanceWithPlacement(info *GpuInstanceProfileInfo, placement *GpuInstancePlacement) (GpuInstance, Return)

	// GetNvLinkState says whether NVLink link is up; GetNvLinkRemotePciInfo is the PCI
	// address of what is at its other end (another GPU, or an NVSwitch).
	GetNvLinkState(link int) (EnableState, Return)
	GetNvLinkRemotePciInfo(link int) (PciInfo, Return)

	GetSupportedEventTypes() (uint64, Return)
	RegisterEvents(eventTypes uint64, set EventSet) Return
}

// GpuInstance is one MIG GPU instance.
type GpuInstance interface {
	GetInfo() (GpuInstanceInfo, Return)
	Destroy() Return
	GetComputeInstanceProfileInfo(profile, engProfile int) (ComputeInstanceProfileInfo, Return)
	CreateComputeInstance(info *ComputeInstanceProfileInfo) (ComputeInstance, Return)
	GetComputeInstances(info *ComputeInstanceProfileInfo) ([]ComputeInstance, Return)
}

// ComputeInstance is one compute instance inside a GPU instance.
type ComputeInstance interface {
	GetInfo() (ComputeInstanceInfo, Return)
	Destroy() Return
}

// EventSet collects events of the devices registered on it.
type EventSet interface {
	// Wait blocks up to timeoutMs for an event; ERROR_TIMEOUT when none came.
	Wait(timeoutMs uint32) (EventData, Return)
	Free() Return
}

// ErrNotBuilt is what New returns in a build without NVML support.
var ErrNotBuilt = errors.New("nvml: gantry was built without NVML support (rebuild with -tags nvml and CGO_ENABLED=1 on a machine with the NVIDIA driver)")
