package devices

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// Request is the GPU part of one pod's requests. Exactly one kind is set: whole units
// (nvidia.com/gpu), shared replicas (nvidia.com/gpu.shared), MIG instances
// (nvidia.com/mig-<profile>, NVIDIA's "+" written as "."), or a fraction of one GPU (gantry.dev/gpu-milli and/or
// gantry.dev/gpu-memory).
type Request struct {
	// Units is the nvidia.com/gpu count. What a unit is depends on the GPU: a whole GPU
	// (exclusive, fractional), a MIG instance (MIG single) or a replica (time-slicing or
	// MPS without renameByDefault), as the device plugin advertises them.
	Units int64
	// Shared is the nvidia.com/gpu.shared replica count (renameByDefault).
	Shared int64
	// MIG lists mixed-strategy MIG instances, sorted by profile.
	MIG []MIGCount
	// Milli and Memory ask for a share of one GPU; Milli below 1000. A gpu-milli request
	// that is a whole multiple of 1000 is read as that many whole GPUs (Units).
	Milli  resources.MilliGPU
	Memory resources.MiB
	// ModelConstraint, when not empty, limits the request to GPUs of these models
	// (e.g. the openb trace's gpu_spec). ParseRequest leaves it empty.
	ModelConstraint []ModelID
	// PerContainer is the most devices of one resource (Units, Shared or one MIG
	// resource) one container of the pod asks for (a replicated GPU or time-sliced MIG
	// device may refuse more than one per container); 0 means one container asks for all
	// of them. ParseRequest leaves it 0.
	PerContainer int64
	// Filter, when set, chooses which of the free devices the request takes (DRA
	// selectors and constraints, filter.go); it also limits the request to whole GPUs
	// and MIG instances. ParseRequest leaves it nil, and a nil filter changes nothing.
	Filter Filter
}

// containerReplicas is the largest replica count one container asks for.
func (r Request) containerReplicas() int64 {
	if r.PerContainer > 0 {
		return r.PerContainer
	}
	n := max(r.Units, r.Shared)
	for _, mc := range r.MIG {
		n = max(n, mc.Count)
	}
	return n
}

// MIGCount is a number of devices of one MIG profile: instances, or replicas of
// time-sliced instances advertised under the profile's resource; Shared asks for the
// replicas advertised under its ".shared" rename (nvidia.com/mig-<profile>.shared).
type MIGCount struct {
	Profile string
	Count   int64
	Shared  bool
}

// Resource is the resource name the devices are advertised under.
func (mc MIGCount) Resource() resources.Name {
	if mc.Shared {
		return resources.MIGResource(mc.Profile) + SharedSuffix
	}
	return resources.MIGResource(mc.Profile)
}

// IsZero reports whether the request asks for no GPU at all.
func (r Request) IsZero() bool {
	return r.Units == 0 && r.Shared == 0 && len(r.MIG) == 0 && r.Milli == 0 && r.Memory == 0
}

// IsFraction reports whether the request is a share of one GPU.
func (r Request) IsFraction() bool { return r.Milli > 0 || r.Memory > 0 }

// String renders the request as resource names and amounts, for messages.
func (r Request) String() string {
	return r.Vector().String()
}

// Vector is the request as resources (gpu-milli whole multiples stay as nvidia.com/gpu).
func (r Request) Vector() resources.Vector {
	v := resources.Vector{}
	set := func(n resources.Name, a int64) {
		if a != 0 {
			v[n] = resources.Amount(a)
		}
	}
	set(resources.NvidiaGPU, r.Units)
	set(resources.NvidiaGPUShared, r.Shared)
	for _, m := range r.MIG {
		set(m.Resource(), m.Count)
	}
	set(resources.GPUMilli, int64(r.Milli))
	set(resources.GPUMemory, int64(r.Memory))
	return v
}

// ParseRequest picks the GPU part of a pod's per-pod requests. Mixing kinds (say
// nvidia.com/gpu and gantry.dev/gpu-milli) is an error, as is a gpu-milli above 1000
// that is not a whole number of GPUs.
func ParseRequest(v resources.Vector) (Request, error) {
	var r Request
	var kinds []string
	for _, name := range v.Names() {
		a := v[name]
		if !name.IsGPU() {
			continue
		}
		if a < 0 {
			return Request{}, fmt.Errorf("%s: amount %d is negative", name, a)
		}
		switch name {
		case resources.NvidiaGPU:
			r.Units, kinds = int64(a), append(kinds, string(name))
		case resources.NvidiaGPUShared:
			r.Shared, kinds = int64(a), append(kinds, string(name))
		case resources.GPUMilli:
			r.Milli = resources.MilliGPU(a)
		case resources.GPUMemory:
			r.Memory = resources.MiB(a)
		default:
			r.MIG = append(r.MIG, migCount(name, int64(a)))
		}
	}
	if len(r.MIG) > 0 {
		kinds = append(kinds, "nvidia.com/mig-*")
	}
	sort.Slice(r.MIG, func(i, j int) bool {
		a, b := r.MIG[i], r.MIG[j]
		return a.Profile < b.Profile || (a.Profile == b.Profile && !a.Shared && b.Shared)
	})
	return normalizeFraction(r, kinds)
}

// migCount reads a MIG resource: both spellings (mig-1g.10gb.me, mig-1g.10gb+me) name
// the same profile, and a ".shared" suffix the renamed replicas of a time-sliced one.
func migCount(name resources.Name, n int64) MIGCount {
	base, shared := strings.CutSuffix(string(name), SharedSuffix)
	p, _ := resources.Name(base).MIGProfile()
	return MIGCount{Profile: p, Count: n, Shared: shared}
}

// normalizeFraction turns whole-GPU gpu-milli into Units and rejects mixed kinds.
func normalizeFraction(r Request, kinds []string) (Request, error) {
	if r.Milli >= resources.MilliPerGPU {
		if r.Milli%resources.MilliPerGPU != 0 {
			return Request{}, fmt.Errorf("%s: %d is more than one GPU but not a whole number of GPUs (a share must be below 1000)", resources.GPUMilli, r.Milli)
		}
		if r.Memory > 0 {
			return Request{}, fmt.Errorf("%s: cannot be combined with %s of %d (whole GPUs)", resources.GPUMemory, resources.GPUMilli, r.Milli)
		}
		if len(kinds) > 0 {
			return Request{}, fmt.Errorf("%s cannot be combined with %s", resources.GPUMilli, strings.Join(kinds, ", "))
		}
		r.Units, r.Milli = int64(r.Milli/resources.MilliPerGPU), 0
		return r, nil
	}
	if r.IsFraction() {
		kinds = append(kinds, "gantry.dev/gpu-milli/gpu-memory")
	}
	if len(kinds) > 1 {
		return Request{}, fmt.Errorf("GPU request mixes %s: a pod asks for one kind of GPU resource", strings.Join(kinds, " and "))
	}
	return r, nil
}
