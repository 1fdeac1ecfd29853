package nodeagent

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// applyGPU makes one GPU hold exactly want: every compute and GPU instance destroyed,
// MIG mode on (off when want is nil; an empty want leaves MIG on with no instances), then each wanted GPU instance created at its start
// slot with one compute instance spanning it. Errors name the GPU; a MIG mode change
// that waits for a GPU reset wraps ErrResetRequired.
func applyGPU(lib nvml.Interface, model devices.Model, index int, want []devices.Instance) error {
	if err := applyOn(lib, model, index, want); err != nil {
		return fmt.Errorf("GPU %d: %w", index, err)
	}
	return nil
}

func applyOn(lib nvml.Interface, model devices.Model, index int, want []devices.Instance) error {
	h, r := lib.DeviceGetHandleByIndex(index)
	if r != nvml.SUCCESS {
		return nvmlError(r, "getting the handle")
	}
	mode := nvml.DEVICE_MIG_ENABLE
	if want == nil {
		mode = nvml.DEVICE_MIG_DISABLE
	}
	current, pending, r := h.GetMigMode()
	if r != nvml.SUCCESS {
		return nvmlError(r, "reading the MIG mode")
	}
	if current == nvml.DEVICE_MIG_ENABLE {
		if err := destroyAll(h); err != nil {
			return err
		}
	}
	if current != mode || pending != mode {
		if err := setMIGMode(h, mode); err != nil {
			return err
		}
	}
	if want == nil {
		return nil
	}
	mem, r := h.GetMemoryInfo()
	if r != nvml.SUCCESS {
		return nvmlError(r, "reading memory")
	}
	offered, err := readProfiles(index, h, mem.Total)
	if err != nil {
		return err
	}
	for _, in := range want {
		if err := createInstance(h, model, offered, in); err != nil {
			return err
		}
	}
	return nil
}

// setMIGMode asks for mode and fails with ErrResetRequired unless it is in effect.
func setMIGMode(h nvml.Device, mode int) error {
	activation, r := h.SetMigMode(mode)
	if r != nvml.SUCCESS {
		return nvmlError(r, "setting MIG mode %s", migModeName(mode))
	}
	if activation != nvml.SUCCESS {
		return fmt.Errorf("MIG mode %s is pending (activation: %v): %w", migModeName(mode), activation, ErrResetRequired)
	}
	current, pending, r := h.GetMigMode()
	if r != nvml.SUCCESS {
		return nvmlError(r, "reading the MIG mode back")
	}
	if current != mode || pending != current {
		return fmt.Errorf("MIG mode is %s with %s pending after asking for %s: %w",
			migModeName(current), migModeName(pending), migModeName(mode), ErrResetRequired)
	}
	return nil
}

func migModeName(mode int) string {
	if mode == nvml.DEVICE_MIG_ENABLE {
		return "on"
	}
	return "off"
}

// createInstance creates one GPU instance of the offered profile named in.Profile at
// the NVML placement starting at in.Start, and a compute instance covering it.
func createInstance(h nvml.Device, model devices.Model, offered []MIGProfile, in devices.Instance) error {
	if _, ok := model.Profile(in.Profile); !ok {
		return fmt.Errorf("%s has no MIG profile %s", model.ID, in.Profile)
	}
	p, ok := findProfile(offered, in.Profile)
	if !ok {
		return fmt.Errorf("NVML offers no MIG profile %s (it offers %v)", in.Profile, profileNames(offered))
	}
	place, ok := placementAt(p, in.Start)
	if !ok {
		return fmt.Errorf("NVML has no placement of %s starting at slot %d (it has %v)", in.Profile, in.Start, p.Placements)
	}
	info := p.raw
	gi, r := h.CreateGpuInstanceWithPlacement(&info, &place)
	if r != nvml.SUCCESS {
		return nvmlError(r, "creating GPU instance %s", in)
	}
	ciInfo, r := gi.GetComputeInstanceProfileInfo(computeProfile(info.SliceCount), nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if r != nvml.SUCCESS {
		return nvmlError(r, "reading the compute profile for %s", in)
	}
	if _, r := gi.CreateComputeInstance(&ciInfo); r != nvml.SUCCESS {
		return nvmlError(r, "creating the compute instance of %s", in)
	}
	return nil
}

func findProfile(ps []MIGProfile, name string) (MIGProfile, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return MIGProfile{}, false
}

func profileNames(ps []MIGProfile) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

func placementAt(p MIGProfile, start int) (nvml.GpuInstancePlacement, bool) {
	for _, q := range p.Placements {
		if int(q.Start) == start {
			return q, true
		}
	}
	return nvml.GpuInstancePlacement{}, false
}

// computeProfile is the compute-instance profile spanning slices compute slices.
func computeProfile(slices uint32) int {
	switch slices {
	case 2:
		return nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE
	case 3:
		return nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE
	case 4:
		return nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE
	case 6:
		return nvml.COMPUTE_INSTANCE_PROFILE_6_SLICE
	case 7:
		return nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE
	case 8:
		return nvml.COMPUTE_INSTANCE_PROFILE_8_SLICE
	}
	return nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE
}

// destroyAll removes every compute and GPU instance of the GPU, of every profile NVML
// defines (GFX, NO_ME and ALL_ME ones included).
func destroyAll(h nvml.Device) error {
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, r := h.GetGpuInstanceProfileInfo(id)
		if r != nvml.SUCCESS {
			continue
		}
		gis, r := h.GetGpuInstances(&info)
		if r != nvml.SUCCESS {
			return nvmlError(r, "listing GPU instances of %s", profileConst(id))
		}
		for _, gi := range gis {
			if err := destroyGI(gi); err != nil {
				return err
			}
		}
	}
	return nil
}

// destroyGI removes a GPU instance's compute instances of every compute profile, then
// the GPU instance.
func destroyGI(gi nvml.GpuInstance) error {
	for cp := 0; cp < nvml.COMPUTE_INSTANCE_PROFILE_COUNT; cp++ {
		info, r := gi.GetComputeInstanceProfileInfo(cp, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if r != nvml.SUCCESS {
			continue
		}
		cis, r := gi.GetComputeInstances(&info)
		if r != nvml.SUCCESS {
			return nvmlError(r, "listing compute instances")
		}
		for _, ci := range cis {
			if r := ci.Destroy(); r != nvml.SUCCESS {
				return nvmlError(r, "destroying a compute instance")
			}
		}
	}
	if r := gi.Destroy(); r != nvml.SUCCESS {
		return nvmlError(r, "destroying a GPU instance")
	}
	return nil
}
