package resources

import "strings"

// Name is a Kubernetes resource name such as "cpu" or "nvidia.com/gpu".
type Name string

// Well-known resource names.
const (
	CPU              Name = "cpu"
	Memory           Name = "memory"
	Pods             Name = "pods"
	EphemeralStorage Name = "ephemeral-storage"

	// NvidiaGPU is what the NVIDIA device plugin advertises for whole GPUs, for MIG slices
	// under the "single" strategy, and for time-sliced replicas without renameByDefault.
	NvidiaGPU Name = "nvidia.com/gpu"
	// NvidiaGPUShared is advertised for time-sliced or MPS replicas with renameByDefault.
	NvidiaGPUShared Name = "nvidia.com/gpu.shared"

	// GPUMilli is Gantry's common GPU accounting unit: thousandths of one GPU's compute.
	// Whole GPUs, MIG slices, shared replicas and fractions all convert into it, so quota
	// and fair share can count them in one currency. Pods may also request it directly
	// (the openb trace's gpu_milli).
	GPUMilli Name = "gantry.dev/gpu-milli"
	// GPUMemory is GPU memory in MiB, requested by pods that share a GPU by memory.
	GPUMemory Name = "gantry.dev/gpu-memory"

	// MIGPrefix starts the resource names of MIG profiles under the "mixed" strategy,
	// e.g. "nvidia.com/mig-1g.10gb".
	MIGPrefix = "nvidia.com/mig-"
)

// MIGProfile returns the profile, in NVIDIA's spelling, when n is a mixed-strategy MIG
// resource: "nvidia.com/mig-3g.40gb" -> "3g.40gb", "nvidia.com/mig-1g.10gb.me" ->
// "1g.10gb+me" (the "+" form is read too).
func (n Name) MIGProfile() (string, bool) {
	if strings.HasPrefix(string(n), MIGPrefix) {
		return CanonicalMIGProfile(strings.TrimPrefix(string(n), MIGPrefix)), true
	}
	return "", false
}

// MIGResource is the mixed-strategy resource name of a MIG profile, in the Kubernetes
// spelling NVIDIA's device plugin advertises: a "+" (not allowed in a resource name)
// becomes "." ("1g.10gb+me" -> nvidia.com/mig-1g.10gb.me). Every MIG resource name Gantry
// writes is built here.
func MIGResource(profile string) Name {
	return Name(MIGPrefix + strings.ReplaceAll(CanonicalMIGProfile(profile), "+", "."))
}

// CanonicalMIGProfile turns the Kubernetes spelling of a MIG profile into NVIDIA's:
// "1g.10gb.me" -> "1g.10gb+me", "1g.24gb.me.all" -> "1g.24gb+me.all". NVIDIA's catalog,
// layouts and device IDs use that spelling; names already in it, "-me" names and anything
// unrecognised come back unchanged (a catalog lookup then reports the unknown profile).
func CanonicalMIGProfile(p string) string {
	size := strings.Index(strings.ToLower(p), "gb")
	if size < 0 || !strings.Contains(p[:size], ".") {
		return p
	}
	if rest := p[size+2:]; strings.HasPrefix(rest, ".") {
		return p[:size+2] + "+" + rest[1:]
	}
	return p
}

// IsGPU reports whether n is any resource served by the GPU device layer.
func (n Name) IsGPU() bool {
	switch n {
	case NvidiaGPU, NvidiaGPUShared, GPUMilli, GPUMemory:
		return true
	}
	_, mig := n.MIGProfile()
	return mig
}

// unit says how a resource's amounts are stored.
type unit int

const (
	unitCount unit = iota // integer count (extended resources, pods, GPU milli)
	unitMilli             // thousandths (cpu)
	unitBytes             // bytes (memory, storage, hugepages)
)

func unitOf(n Name) unit {
	switch {
	case n == CPU:
		return unitMilli
	case n == Memory, n == EphemeralStorage, n == "storage", strings.HasPrefix(string(n), "hugepages-"):
		return unitBytes
	default:
		return unitCount
	}
}
