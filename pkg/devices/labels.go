package devices

// Node labels of the device layer: the node agent writes them and pkg/cluster reads
// them, so both use these. The nvidia.com ones are GPU Feature Discovery's and the MIG
// manager's; the gantry.dev ones are Gantry's own.
const (
	LabelGPUProduct      = "nvidia.com/gpu.product"
	LabelGPUCount        = "nvidia.com/gpu.count"
	LabelGPUMemory       = "nvidia.com/gpu.memory"
	LabelGPUFamily       = "nvidia.com/gpu.family"
	LabelGPUReplicas     = "nvidia.com/gpu.replicas"
	LabelSharingStrategy = "nvidia.com/gpu.sharing-strategy"
	LabelMIGCapable      = "nvidia.com/mig.capable"
	LabelMIGStrategy     = "nvidia.com/mig.strategy"
	// LabelMIGConfig names the mig-parted config a MIG manager applies (see
	// pkg/nodeagent/migprotocol for the protocol around it).
	LabelMIGConfig       = "nvidia.com/mig.config"
	LabelCUDADriverMajor = "nvidia.com/cuda.driver.major"
	LabelCUDADriverMinor = "nvidia.com/cuda.driver.minor"
	LabelCUDADriverRev   = "nvidia.com/cuda.driver.rev"
	LabelDriverVersion   = "nvidia.com/cuda.driver-version.full"
	LabelCUDARuntimeMaj  = "nvidia.com/cuda.runtime.major"
	LabelCUDARuntimeMin  = "nvidia.com/cuda.runtime.minor"
	LabelCUDARuntimeFull = "nvidia.com/cuda.runtime-version.full"
	// GFD's newer spellings of the driver and runtime versions, written beside the old.
	LabelDriverVersionMajor    = "nvidia.com/cuda.driver-version.major"
	LabelDriverVersionMinor    = "nvidia.com/cuda.driver-version.minor"
	LabelDriverVersionRevision = "nvidia.com/cuda.driver-version.revision"
	LabelRuntimeVersionMajor   = "nvidia.com/cuda.runtime-version.major"
	LabelRuntimeVersionMinor   = "nvidia.com/cuda.runtime-version.minor"
	LabelComputeMajor          = "nvidia.com/gpu.compute.major"
	LabelComputeMinor          = "nvidia.com/gpu.compute.minor"
	LabelMachine               = "nvidia.com/gpu.machine"
	LabelMPSCapable            = "nvidia.com/mps.capable"

	// LabelNVLinkDomains is how many NVLink domains the node's GPUs form;
	// LabelGPUsPerNVLinkDomain their size when all are equal (pkg/cluster reads it).
	LabelNVLinkDomains       = "gantry.dev/nvlink-domains"
	LabelGPUsPerNVLinkDomain = "gantry.dev/gpus-per-nvlink-domain"
	// LabelGPUSharing = "fractional" marks a node whose GPUs are shared by milli-GPU and
	// memory fractions (Gantry's own mode; GFD has no label for it).
	LabelGPUSharing = "gantry.dev/gpu-sharing"
)
