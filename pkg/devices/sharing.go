package devices

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/resources"
)

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
	// FailRequestsGreaterThanOne refuses a container that asks for more than one
	// time-sliced replica (NVIDIA's failRequestsGreaterThanOne; false by default, as
	// there). MPS refuses such containers whatever it says, as NVIDIA's plugin does: an MPS
	// client is limited to one replica's memory and threads, so a second replica would be
	// charged and never received.
	FailRequestsGreaterThanOne bool
	// Resources replicates resources one by one (NVIDIA's sharing.timeSlicing.resources or
	// sharing.mps.resources): a subset of the GPUs, or MIG devices (time-sliced MIG), each
	// with its own replica count and name. Empty means Replicas and RenameByDefault for
	// nvidia.com/gpu on every GPU. In mode mig it lists the time-sliced MIG resources
	// (nvidia.com/mig-<profile>; nvidia.com/gpu under the single strategy): the device
	// plugin's time-slicing of the MIG manager's layout.
	Resources []ReplicatedResource
}

// ReplicatedResource is one entry of NVIDIA's sharing resources list.
type ReplicatedResource struct {
	// Name is the resource replicated: nvidia.com/gpu, or nvidia.com/mig-<profile> (or
	// nvidia.com/gpu for MIG devices under the single strategy).
	Name resources.Name
	// Rename advertises the replicas under another name; empty keeps Name, or
	// <Name>.shared with RenameByDefault.
	Rename resources.Name
	// Replicas per device, at least 1.
	Replicas int
	// Devices selects the devices replicated: empty or "all" for every one, else GPU
	// indices ("0"), MIG indices ("<gpu>:<mig>") or UUIDs. DeviceCount > 0 takes the
	// first DeviceCount devices instead (NVIDIA's devices: <count>).
	Devices     []string
	DeviceCount int
}

// SharedSuffix is what renameByDefault appends to a replicated resource's name.
const SharedSuffix = ".shared"

// Replicates reports whether the mode advertises replicas (time-slicing or MPS).
func (s Sharing) Replicates() bool {
	m := s.EffectiveMode()
	return m == TimeSlicing || m == MPS
}

// ReplicatedResources is what the mode replicates: Resources, or else nvidia.com/gpu on
// every GPU with Replicas (renamed under RenameByDefault). Nothing outside time-slicing
// and MPS.
func (s Sharing) ReplicatedResources() []ReplicatedResource {
	if !s.Replicates() {
		return nil
	}
	if len(s.Resources) > 0 {
		return s.Resources
	}
	if s.Replicas < 1 {
		return nil
	}
	return []ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: s.Replicas}}
}

// AdvertisedName is the name r's replicas are advertised under: its Rename, else
// <Name>.shared under RenameByDefault, else Name.
func (s Sharing) AdvertisedName(r ReplicatedResource) resources.Name {
	switch {
	case r.Rename != "":
		return r.Rename
	case s.RenameByDefault:
		return r.Name + SharedSuffix
	}
	return r.Name
}

// DeviceRef names one device the way NVIDIA's devices lists do: its position among the
// devices of its resource (for DeviceCount), its index ("3", or "3:1" for the second MIG
// device of GPU 3) and its UUID.
type DeviceRef struct {
	Position int
	Index    string
	UUID     string
}

// Selects reports whether r replicates the device d (of r.Name).
func (r ReplicatedResource) Selects(d DeviceRef) bool {
	if r.DeviceCount > 0 {
		return d.Position < r.DeviceCount
	}
	if len(r.Devices) == 0 {
		return true
	}
	for _, want := range r.Devices {
		if want == "all" || want == d.Index || (d.UUID != "" && want == d.UUID) {
			return true
		}
	}
	return false
}

// Replication finds the entry replicating device d of resource name, if any.
func (s Sharing) Replication(name resources.Name, d DeviceRef) (ReplicatedResource, bool) {
	for _, r := range s.ReplicatedResources() {
		if r.Name == name && r.Selects(d) {
			return r, true
		}
	}
	return ReplicatedResource{}, false
}

// ForGPU is the sharing of one whole (non-MIG) GPU under s: s itself when it replicates
// the GPU as nvidia.com/gpu, with that entry's replicas and name; Exclusive for a GPU no
// entry selects (NVIDIA advertises it unreplicated); s unchanged in the other modes.
func (s Sharing) ForGPU(d DeviceRef) Sharing {
	if !s.Replicates() || len(s.Resources) == 0 {
		return s
	}
	r, ok := s.Replication(resources.NvidiaGPU, d)
	if !ok {
		return Sharing{Mode: Exclusive}
	}
	g := s
	g.Resources = nil
	g.Replicas = r.Replicas
	g.RenameByDefault = s.AdvertisedName(r) == resources.NvidiaGPUShared
	return g
}

// RefusesMultiReplica reports whether a container may hold at most one replica: always
// under MPS, under time-slicing (time-sliced MIG devices included) when
// FailRequestsGreaterThanOne is set.
func (s Sharing) RefusesMultiReplica() bool {
	switch s.EffectiveMode() {
	case MPS:
		return true
	case TimeSlicing:
		return s.FailRequestsGreaterThanOne
	case MIG:
		return s.FailRequestsGreaterThanOne && len(s.Resources) > 0
	}
	return false
}

// MIGReplication finds the entry time-slicing MIG device d, advertised as name
// (nvidia.com/mig-<profile>, or nvidia.com/gpu under the single strategy). In mode MIG,
// Resources lists the time-sliced MIG resources (NVIDIA's sharing.timeSlicing.resources
// beside the MIG manager's layout); in time-slicing mode it is Replication.
func (s Sharing) MIGReplication(name resources.Name, d DeviceRef) (ReplicatedResource, bool) {
	if s.EffectiveMode() != MIG {
		return s.Replication(name, d)
	}
	for _, r := range s.Resources {
		if r.Name == name && r.Selects(d) {
			return r, true
		}
	}
	return ReplicatedResource{}, false
}

// CheckContainerReplicas is the refusal a container asking for n replicas of name gets,
// in NVIDIA's words; nil when the sharing allows it. The device plugin and the
// scheduler ask the same question so a pod the node would refuse is never placed.
func (s Sharing) CheckContainerReplicas(name resources.Name, n int64) error {
	if n <= 1 || !s.RefusesMultiReplica() {
		return nil
	}
	mode := s.EffectiveMode()
	if mode == MIG {
		mode = TimeSlicing // MIG devices are replicated by time-slicing only
	}
	return fmt.Errorf("%s is shared (%s): maximum request size for shared resources is 1; found %d", name, mode, n)
}

// MPSClientMemory is one MPS client's pinned device memory limit on a device of total
// memory shared by replicas clients: MPSMemoryLimit when set, else total ÷ replicas
// (rounded down), what NVIDIA's MPS control daemon sets as the device's default.
func (s Sharing) MPSClientMemory(total resources.MiB, replicas int) resources.MiB {
	if s.MPSMemoryLimit > 0 {
		return s.MPSMemoryLimit
	}
	if replicas < 1 {
		return total
	}
	return total / resources.MiB(replicas)
}

// MPSThreadPercentage is one MPS client's active thread percentage with replicas
// clients per device: 100 ÷ replicas, rounded down, as NVIDIA's control daemon sets it.
func MPSThreadPercentage(replicas int) int {
	if replicas < 1 {
		return 100
	}
	return 100 / replicas
}
