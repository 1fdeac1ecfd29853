package nvml

// Memory is a device's framebuffer memory in bytes (nvmlMemory_t).
type Memory struct {
	Total, Free, Used uint64
}

// PciInfo is a device's PCI address (nvmlPciInfo_t, the fields Gantry reads). BusID is
// the "DDDDDDDD:BB:DD.F" or "DDDD:BB:DD.F" form NVML prints.
type PciInfo struct {
	BusID       string
	Domain      uint32
	Bus         uint32
	Device      uint32
	PciDeviceID uint32
}

// EnableState is NVML's enabled/disabled flag (nvmlEnableState_t).
type EnableState int32

const (
	FEATURE_DISABLED EnableState = 0
	FEATURE_ENABLED  EnableState = 1
)

// MIG modes for SetMigMode / GetMigMode.
const (
	DEVICE_MIG_DISABLE = 0
	DEVICE_MIG_ENABLE  = 1
)

// GPU-instance profile IDs (NVML_GPU_INSTANCE_PROFILE_*). The name (1g.5gb, ...) depends
// on the GPU's memory; the ID only on the slice shape.
const (
	GPU_INSTANCE_PROFILE_1_SLICE      = 0
	GPU_INSTANCE_PROFILE_2_SLICE      = 1
	GPU_INSTANCE_PROFILE_3_SLICE      = 2
	GPU_INSTANCE_PROFILE_4_SLICE      = 3
	GPU_INSTANCE_PROFILE_7_SLICE      = 4
	GPU_INSTANCE_PROFILE_8_SLICE      = 5
	GPU_INSTANCE_PROFILE_6_SLICE      = 6
	GPU_INSTANCE_PROFILE_1_SLICE_REV1 = 7 // 1g with media extensions (+me)
	GPU_INSTANCE_PROFILE_2_SLICE_REV1 = 8 // 2g with media extensions (+me)
	GPU_INSTANCE_PROFILE_1_SLICE_REV2 = 9 // 1g with two memory slices (1g.10gb on A100-40GB)
	GPU_INSTANCE_PROFILE_COUNT        = 10
)

// Compute-instance profile IDs (NVML_COMPUTE_INSTANCE_PROFILE_*) and the shared engine
// profile Gantry always uses.
const (
	COMPUTE_INSTANCE_PROFILE_1_SLICE       = 0
	COMPUTE_INSTANCE_PROFILE_2_SLICE       = 1
	COMPUTE_INSTANCE_PROFILE_3_SLICE       = 2
	COMPUTE_INSTANCE_PROFILE_4_SLICE       = 3
	COMPUTE_INSTANCE_PROFILE_7_SLICE       = 4
	COMPUTE_INSTANCE_PROFILE_8_SLICE       = 5
	COMPUTE_INSTANCE_PROFILE_6_SLICE       = 6
	COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED = 0
)

// GpuInstanceProfileInfo describes one GPU-instance profile on a device
// (nvmlGpuInstanceProfileInfo_t): SliceCount is the compute slices, InstanceCount how many
// fit on the GPU, MemorySizeMB its memory.
type GpuInstanceProfileInfo struct {
	ID                  uint32
	IsP2pSupported      uint32
	SliceCount          uint32
	InstanceCount       uint32
	MultiprocessorCount uint32
	CopyEngineCount     uint32
	DecoderCount        uint32
	EncoderCount        uint32
	JpegCount           uint32
	OfaCount            uint32
	MemorySizeMB        uint64
}

// GpuInstancePlacement is where a GPU instance sits: Start and Size in memory slices.
type GpuInstancePlacement struct {
	Start, Size uint32
}

// GpuInstanceInfo identifies a live GPU instance (nvmlGpuInstanceInfo_t, less the
// parent device handle).
type GpuInstanceInfo struct {
	ID        uint32
	ProfileID uint32
	Placement GpuInstancePlacement
}

// ComputeInstanceProfileInfo describes one compute-instance profile inside a GPU instance.
type ComputeInstanceProfileInfo struct {
	ID                  uint32
	SliceCount          uint32
	InstanceCount       uint32
	MultiprocessorCount uint32
}

// ComputeInstanceInfo identifies a live compute instance.
type ComputeInstanceInfo struct {
	ID        uint32
	ProfileID uint32
	// GpuInstanceID is the GPU instance the compute instance belongs to.
	GpuInstanceID uint32
}

// Event types (nvmlEventType*), a bit mask.
const (
	EventTypeSingleBitEccError uint64 = 0x1
	EventTypeDoubleBitEccError uint64 = 0x2
	EventTypePState            uint64 = 0x4
	EventTypeXidCriticalError  uint64 = 0x8
	EventTypeClock             uint64 = 0x10
	EventTypeMigConfigChange   uint64 = 0x100
)

// NoInstance is the GPU/compute-instance ID of an event that concerns the whole GPU.
const NoInstance uint32 = 0xFFFFFFFF

// EventData is one event from an EventSet (nvmlEventData_t). EventData carries the XID
// for XID events.
type EventData struct {
	Device            Device
	EventType         uint64
	EventData         uint64
	GpuInstanceID     uint32
	ComputeInstanceID uint32
}

// NVLinkMaxLinks is the most NVLink links a GPU has (NVML_NVLINK_MAX_LINKS, Hopper: 18).
const NVLinkMaxLinks = 18
