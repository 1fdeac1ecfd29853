package mock

import "github.com/gantry-sched/gantry/pkg/nodeagent/nvml"

// a100Profile is one GPU-instance profile of the A100-SXM4-40GB as NVML describes it:
// compute slices, memory slices (the placement size), the start slots NVML lists as
// possible placements, how many fit on one GPU, memory and the media engines it owns.
type a100Profile struct {
	id       int
	compute  uint32
	size     uint32
	starts   []uint32
	count    uint32
	memoryMB uint64
	sms      uint32
	decoders uint32
	jpegs    uint32
	ofas     uint32
}

// a100Geometry: 8 memory slices, 7 compute slices (98 SMs usable in MIG mode), and the
// media engines a MIG-mode A100 can hand out.
const (
	a100MemorySlices  = 8
	a100ComputeSlices = 7
	a100Decoders      = 5
	a100Jpegs         = 1
	a100Ofas          = 1
)

// a100Profiles is the MIG User Guide's A100-40GB table with the placements of
// `nvidia-smi mig -lgipp`: 1g.5gb {0..6}:1, 1g.5gb+me {0..6}:1, 1g.10gb {0,2,4,6}:2,
// 2g.10gb {0,2,4}:2, 3g.20gb {0,4}:4, 4g.20gb {0}:4, 7g.40gb {0}:8. The last memory
// slice is never a start: it only serves instances of two or more slices.
func a100Profiles() []a100Profile {
	return []a100Profile{
		{id: nvml.GPU_INSTANCE_PROFILE_1_SLICE, compute: 1, size: 1, starts: []uint32{0, 1, 2, 3, 4, 5, 6}, count: 7, memoryMB: 4864, sms: 14},
		{id: nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, compute: 1, size: 1, starts: []uint32{0, 1, 2, 3, 4, 5, 6}, count: 1, memoryMB: 4864, sms: 14, decoders: 1, jpegs: 1, ofas: 1},
		{id: nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2, compute: 1, size: 2, starts: []uint32{0, 2, 4, 6}, count: 4, memoryMB: 9856, sms: 14, decoders: 1},
		{id: nvml.GPU_INSTANCE_PROFILE_2_SLICE, compute: 2, size: 2, starts: []uint32{0, 2, 4}, count: 3, memoryMB: 9856, sms: 28, decoders: 1},
		{id: nvml.GPU_INSTANCE_PROFILE_3_SLICE, compute: 3, size: 4, starts: []uint32{0, 4}, count: 2, memoryMB: 19968, sms: 42, decoders: 2},
		{id: nvml.GPU_INSTANCE_PROFILE_4_SLICE, compute: 4, size: 4, starts: []uint32{0}, count: 1, memoryMB: 19968, sms: 56, decoders: 2},
		{id: nvml.GPU_INSTANCE_PROFILE_7_SLICE, compute: 7, size: 8, starts: []uint32{0}, count: 1, memoryMB: 40192, sms: 98, decoders: 5, jpegs: 1, ofas: 1},
	}
}

func findProfile(id int) (a100Profile, bool) {
	for _, p := range a100Profiles() {
		if p.id == id {
			return p, true
		}
	}
	return a100Profile{}, false
}

func (p a100Profile) info() nvml.GpuInstanceProfileInfo {
	return nvml.GpuInstanceProfileInfo{
		ID: uint32(p.id), IsP2pSupported: 0, SliceCount: p.compute, InstanceCount: p.count,
		MultiprocessorCount: p.sms, CopyEngineCount: p.compute, DecoderCount: p.decoders,
		JpegCount: p.jpegs, OfaCount: p.ofas, MemorySizeMB: p.memoryMB,
	}
}

func (p a100Profile) allowsStart(s uint32) bool {
	for _, x := range p.starts {
		if x == s {
			return true
		}
	}
	return false
}

// computeProfileFor maps compute slices to the compute-instance profile ID.
func computeProfileFor(slices uint32) (int, bool) {
	switch slices {
	case 1:
		return nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, true
	case 2:
		return nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE, true
	case 3:
		return nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE, true
	case 4:
		return nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE, true
	case 7:
		return nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE, true
	}
	return 0, false
}

// computeSlicesOf is the inverse of computeProfileFor.
func computeSlicesOf(profile int) (uint32, bool) {
	for _, s := range []uint32{1, 2, 3, 4, 7} {
		if p, _ := computeProfileFor(s); p == profile {
			return s, true
		}
	}
	return 0, false
}
