package devices

import "github.com/gantry-sched/gantry/pkg/resources"

// SharingMode is how a GPU is offered to pods.
type SharingMode string

const (
	// Exclusive: whole GPUs, one pod each (nvidia.com/gpu).
	Exclusive SharingMode = "exclusive"
	// MIG: the GPU is partitioned into MIG instances by a layout.
	MIG SharingMode = "mig"
	// TimeSlicing: each GPU is advertised as Replicas time-sliced replicas.
	TimeSlicing SharingMode = "time-slicing"
	// MPS: each GPU is advertised as Replicas MPS clients with a memory limit each.
	MPS SharingMode = "mps"
	// Fractional: pods ask for a share of one GPU in milli-GPU and/or MiB of memory
	// (gantry.dev/gpu-milli, gantry.dev/gpu-memory; the openb trace's gpu_milli).
	Fractional SharingMode = "fractional"
)

// MIGStrategy is the device plugin's MIG strategy.
type MIGStrategy string

const (
	// MIGSingle: every GPU of the node has one profile, advertised as nvidia.com/gpu.
	MIGSingle MIGStrategy = "single"
	// MIGMixed: each profile is advertised as nvidia.com/mig-<profile>.
	MIGMixed MIGStrategy = "mixed"
)

// Sharing configures how the GPUs of a node (or one GPU) are shared. It is plain data, read
// from manifests and node labels; the device model validates it against the GPU model.
type Sharing struct {
	Mode SharingMode
	// MIG: strategy and layout. Layout names a layout in the style of NVIDIA's mig-parted
	// ("all-disabled", "all-1g.10gb", "all-balanced") or "custom", in which case
	// CustomProfiles lists, per GPU, the profiles to create (a single entry applies to
	// every GPU).
	MIGStrategy    MIGStrategy
	Layout         string
	CustomProfiles [][]string
	// TimeSlicing and MPS: replicas per GPU; RenameByDefault advertises
	// nvidia.com/gpu.shared instead of nvidia.com/gpu.
	Replicas        int
	RenameByDefault bool
	// MPS: per-client GPU memory limit; 0 means the GPU's memory divided by Replicas.
	MPSMemoryLimit resources.MiB
}
