package nodeagent

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// MIGProfile is one GPU-instance profile a GPU offers, as NVML reports it.
type MIGProfile struct {
	// Name is the profile's name as nvidia-smi and NVIDIA's device plugin write it
	// ("1g.10gb", "1g.10gb+me", "1g.20gb-me", "2g.20gb+gfx", "1g.10gb+me.all").
	Name string
	// NVMLID is the GPU_INSTANCE_PROFILE_* constant.
	NVMLID        int
	ComputeSlices int
	// InstanceCount is how many instances of the profile fit on the GPU.
	InstanceCount int
	// Memory is NVML's MemorySizeMB for the profile.
	Memory resources.MiB
	// Placements are where an instance may sit (NVML's possible placements); empty
	// when NVML cannot list them.
	Placements []nvml.GpuInstancePlacement
	// raw is NVML's profile info, to create instances with.
	raw nvml.GpuInstanceProfileInfo
}

// readProfiles lists every GPU-instance profile NVML offers on a GPU, in
// GPU_INSTANCE_PROFILE_* order (read-only; NVML answers with MIG mode off too). A
// profile the GPU lacks answers ERROR_NOT_SUPPORTED (ERROR_INVALID_ARGUMENT on drivers
// that predate the constant).
func readProfiles(gpu int, h nvml.Device, totalBytes uint64) ([]MIGProfile, error) {
	var out []MIGProfile
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, r := h.GetGpuInstanceProfileInfo(id)
		if r == nvml.ERROR_NOT_SUPPORTED || r == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if r != nvml.SUCCESS {
			return nil, nvmlError(r, "GPU %d: reading MIG profile %s", gpu, profileConst(id))
		}
		// info.Id is the driver's own profile ID (19 for an H100's 1g.10gb, as nvidia-smi
		// mig -lgip shows), not the constant asked for: it stays as NVML gave it, for the
		// calls that take info back.
		p := MIGProfile{Name: ProfileName(id, info, totalBytes), NVMLID: id, ComputeSlices: int(info.SliceCount),
			InstanceCount: int(info.InstanceCount), Memory: resources.MiB(info.MemorySizeMB), raw: info}
		placements, r := h.GetGpuInstancePossiblePlacements(&info)
		switch r {
		case nvml.SUCCESS:
			p.Placements = placements
		case nvml.ERROR_NOT_SUPPORTED:
		default:
			return nil, nvmlError(r, "GPU %d: reading the placements of MIG profile %s", gpu, p.Name)
		}
		out = append(out, p)
	}
	return out, nil
}

// ProfileName names a GPU-instance profile the way nvidia-smi, NVIDIA's device plugin
// and mig-parted do: "<compute>g.<GB>gb" plus the profile's attribute. The GB figure is
// the profile's share of the GPU's memory rounded up to eighths, times the GPU's memory
// in whole GB (rounded up), rounded to the nearest GB: 4864 MB of a 40 GB A100 is "5gb".
// profile is the GPU_INSTANCE_PROFILE_* constant info was read for; info.Id is not (on
// real drivers it is the device's own profile numbering).
func ProfileName(profile int, info nvml.GpuInstanceProfileInfo, totalBytes uint64) string {
	if totalBytes == 0 {
		return fmt.Sprintf("%dg.0gb%s", info.SliceCount, profileSuffix(profile))
	}
	const gib = 1 << 30
	eighths := (info.MemorySizeMB<<20*8 + totalBytes - 1) / totalBytes
	totalGB := (totalBytes + gib - 1) / gib
	gb := (eighths*totalGB*2 + 8) / 16 // round(eighths*totalGB/8), half up
	return fmt.Sprintf("%dg.%dgb%s", info.SliceCount, gb, profileSuffix(profile))
}

// profileSuffix is the attribute NVIDIA's tools append to a profile's name: "+me" for
// the media-extension profiles (REV1), "+me.all" for ALL_ME, "+gfx" for the graphics
// profiles, "-me" for NO_ME (no media engines at all). REV2 (more memory per slice)
// shows only in the GB figure.
func profileSuffix(id int) string {
	switch id {
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		return "+me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
		return "+me.all"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX,
		nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX:
		return "+gfx"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
		return "-me"
	}
	return ""
}

// profileConst names an NVML profile ID in errors, as nvml.h spells it.
func profileConst(id int) string {
	names := [...]string{"1_SLICE", "2_SLICE", "3_SLICE", "4_SLICE", "7_SLICE", "8_SLICE", "6_SLICE",
		"1_SLICE_REV1", "2_SLICE_REV1", "1_SLICE_REV2", "1_SLICE_GFX", "2_SLICE_GFX", "4_SLICE_GFX",
		"1_SLICE_NO_ME", "2_SLICE_NO_ME", "1_SLICE_ALL_ME", "2_SLICE_ALL_ME", "3_SLICE_GFX"}
	if id >= 0 && id < len(names) {
		return "GPU_INSTANCE_PROFILE_" + names[id]
	}
	return fmt.Sprintf("GPU instance profile %d", id)
}
