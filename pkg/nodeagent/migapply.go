package nodeagent

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
)

// applyGPU makes one GPU hold exactly want: MIG mode on (off for no instances), every
// compute and GPU instance destroyed, then each wanted GPU instance created at its
// start slot with one compute instance spanning it.
func applyGPU(lib nvml.Interface, model devices.Model, index int, want []devices.Instance) error {
	h, r := lib.DeviceGetHandleByIndex(index)
	if r != nvml.SUCCESS {
		return nvml.Wrap(r, "getting the handle")
	}
	mode := nvml.DEVICE_MIG_ENABLE
	if len(want) == 0 {
		mode = nvml.DEVICE_MIG_DISABLE
	}
	current, _, r := h.GetMigMode()
	if r != nvml.SUCCESS {
		return nvml.Wrap(r, "reading the MIG mode")
	}
	if current == nvml.DEVICE_MIG_ENABLE {
		if err := destroyAll(h); err != nil {
			return err
		}
	}
	if current != mode {
		activation, r := h.SetMigMode(mode)
		if r != nvml.SUCCESS {
			return nvml.Wrap(r, "setting MIG mode %d", mode)
		}
		if activation != nvml.SUCCESS {
			return nvml.Wrap(activation, "MIG mode %d is pending (a GPU reset is needed)", mode)
		}
	}
	ids, err := profileIDs(h)
	if err != nil {
		return err
	}
	for _, in := range want {
		if err := createInstance(h, model, ids, in); err != nil {
			return err
		}
	}
	return nil
}

// profileIDs maps the GPU's profile names to NVML profile infos.
func profileIDs(h nvml.Device) (map[string]nvml.GpuInstanceProfileInfo, error) {
	mem, r := h.GetMemoryInfo()
	if r != nvml.SUCCESS {
		return nil, nvml.Wrap(r, "reading memory")
	}
	out := map[string]nvml.GpuInstanceProfileInfo{}
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, r := h.GetGpuInstanceProfileInfo(id)
		if r == nvml.SUCCESS {
			out[ProfileName(info, mem.Total)] = info
		}
	}
	return out, nil
}

// createInstance creates one GPU instance and a compute instance covering it.
func createInstance(h nvml.Device, model devices.Model, ids map[string]nvml.GpuInstanceProfileInfo, in devices.Instance) error {
	info, ok := ids[in.Profile]
	if !ok {
		return fmt.Errorf("NVML offers no profile %s", in.Profile)
	}
	p, ok := model.Profile(in.Profile)
	if !ok {
		return fmt.Errorf("%s has no profile %s", model.ID, in.Profile)
	}
	gi, r := h.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: uint32(in.Start), Size: uint32(p.MemorySlices)})
	if r != nvml.SUCCESS {
		return nvml.Wrap(r, "creating GPU instance %s", in)
	}
	ciInfo, r := gi.GetComputeInstanceProfileInfo(computeProfile(info.SliceCount), nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if r != nvml.SUCCESS {
		return nvml.Wrap(r, "compute profile for %s", in)
	}
	if _, r := gi.CreateComputeInstance(&ciInfo); r != nvml.SUCCESS {
		return nvml.Wrap(r, "creating the compute instance of %s", in)
	}
	return nil
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

// destroyAll removes every compute and GPU instance of the GPU.
func destroyAll(h nvml.Device) error {
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, r := h.GetGpuInstanceProfileInfo(id)
		if r != nvml.SUCCESS {
			continue
		}
		gis, r := h.GetGpuInstances(&info)
		if r != nvml.SUCCESS {
			return nvml.Wrap(r, "listing GPU instances of profile %d", id)
		}
		for _, gi := range gis {
			if err := destroyGI(gi); err != nil {
				return err
			}
		}
	}
	return nil
}

func destroyGI(gi nvml.GpuInstance) error {
	for cp := nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE; cp <= nvml.COMPUTE_INSTANCE_PROFILE_6_SLICE; cp++ {
		info, r := gi.GetComputeInstanceProfileInfo(cp, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if r != nvml.SUCCESS {
			continue
		}
		cis, r := gi.GetComputeInstances(&info)
		if r != nvml.SUCCESS {
			return nvml.Wrap(r, "listing compute instances")
		}
		for _, ci := range cis {
			if r := ci.Destroy(); r != nvml.SUCCESS {
				return nvml.Wrap(r, "destroying a compute instance")
			}
		}
	}
	if r := gi.Destroy(); r != nvml.SUCCESS {
		return nvml.Wrap(r, "destroying a GPU instance")
	}
	return nil
}
