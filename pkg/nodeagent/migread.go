package nodeagent

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// readMIG reads a GPU's MIG mode and live instances into g. A GPU with MIG on gets a
// MIG sharing whose custom layout is exactly its instances, so the device model offers
// what the GPU really has.
func (d *Discovery) readMIG(g *GPUInfo, h nvml.Device, sharing devices.Sharing, totalBytes uint64) error {
	current, _, r := h.GetMigMode()
	if r == nvml.ERROR_NOT_SUPPORTED {
		return nil
	}
	if r != nvml.SUCCESS {
		return nvml.Wrap(r, "GPU %d: reading its MIG mode", g.Index)
	}
	d.MIGCapable = true
	if current != nvml.DEVICE_MIG_ENABLE {
		if sharing.Mode == devices.MIG {
			g.Sharing = devices.Sharing{Mode: devices.MIG, MIGStrategy: sharing.MIGStrategy, Layout: devices.LayoutDisabled}
		}
		return nil
	}
	g.MIGEnabled = true
	migs, err := readMIGDevices(g.Index, h, totalBytes)
	if err != nil {
		return err
	}
	g.MIG = migs
	profiles := make([]string, len(migs))
	g.Instances = make([]devices.Instance, len(migs))
	for i, m := range migs {
		g.Instances[i], profiles[i] = m.Instance, m.Instance.Profile
	}
	g.Sharing = devices.Sharing{Mode: devices.MIG, MIGStrategy: sharing.MIGStrategy, Layout: devices.LayoutDisabled}
	if len(profiles) > 0 {
		g.Sharing.Layout, g.Sharing.CustomProfiles = devices.LayoutCustom, [][]string{profiles}
	}
	return nil
}

// readMIGDevices lists the GPU instances of every profile and names each after its
// first compute instance's MIG device UUID.
func readMIGDevices(gpu int, h nvml.Device, totalBytes uint64) ([]MIGDevice, error) {
	uuids, err := migUUIDs(gpu, h)
	if err != nil {
		return nil, err
	}
	var out []MIGDevice
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, r := h.GetGpuInstanceProfileInfo(id)
		if r == nvml.ERROR_NOT_SUPPORTED || r == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if r != nvml.SUCCESS {
			return nil, nvml.Wrap(r, "GPU %d: reading MIG profile %d", gpu, id)
		}
		gis, r := h.GetGpuInstances(&info)
		if r != nvml.SUCCESS {
			return nil, nvml.Wrap(r, "GPU %d: listing GPU instances of profile %d", gpu, id)
		}
		for _, gi := range gis {
			gii, r := gi.GetInfo()
			if r != nvml.SUCCESS {
				return nil, nvml.Wrap(r, "GPU %d: reading a GPU instance of profile %d", gpu, id)
			}
			u := uuids[int(gii.ID)]
			out = append(out, MIGDevice{
				Instance:      devices.Instance{Profile: ProfileName(info, totalBytes), Start: int(gii.Placement.Start)},
				UUID:          u.uuid,
				GpuInstanceID: int(gii.ID), ComputeInstanceID: u.ci,
				Memory: resources.MiB(info.MemorySizeMB),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance.Start < out[j].Instance.Start })
	return out, nil
}

type migID struct {
	uuid string
	ci   int
}

// migUUIDs maps GPU-instance IDs to the UUID of their first MIG device.
func migUUIDs(gpu int, h nvml.Device) (map[int]migID, error) {
	max, r := h.GetMaxMigDeviceCount()
	if r != nvml.SUCCESS {
		return nil, nvml.Wrap(r, "GPU %d: reading its MIG device count", gpu)
	}
	out := map[int]migID{}
	for i := 0; i < max; i++ {
		m, r := h.GetMigDeviceHandleByIndex(i)
		if r == nvml.ERROR_NOT_FOUND || r == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if r != nvml.SUCCESS {
			return nil, nvml.Wrap(r, "GPU %d: MIG device %d", gpu, i)
		}
		gi, r1 := m.GetGpuInstanceId()
		ci, r2 := m.GetComputeInstanceId()
		u, r3 := m.GetUUID()
		if err := firstFailure(r1, r2, r3); err != nil {
			return nil, fmt.Errorf("GPU %d: MIG device %d: %w", gpu, i, err)
		}
		if _, seen := out[gi]; !seen {
			out[gi] = migID{uuid: u, ci: ci}
		}
	}
	return out, nil
}

func firstFailure(rs ...nvml.Return) error {
	for _, r := range rs {
		if r != nvml.SUCCESS {
			return r
		}
	}
	return nil
}

// ProfileName names a GPU-instance profile the way NVIDIA's tools do: "<compute>g.<GB>gb"
// with "+me" for the media-extension profiles. The GB figure is the profile's share of
// the GPU's memory rounded up to eighths, times the GPU's memory in whole GB (rounded
// up), rounded to the nearest GB: 4864 MB of a 40 GB A100 is "5gb".
func ProfileName(info nvml.GpuInstanceProfileInfo, totalBytes uint64) string {
	const gib = 1 << 30
	totalMB := totalBytes >> 20
	if totalMB == 0 {
		return fmt.Sprintf("%dg.0gb", info.SliceCount)
	}
	eighths := (info.MemorySizeMB*8 + totalMB - 1) / totalMB
	totalGB := (totalBytes + gib - 1) / gib
	gb := (eighths*totalGB*2 + 8) / 16 // round(eighths*totalGB/8), half up
	name := fmt.Sprintf("%dg.%dgb", info.SliceCount, gb)
	if info.ID == nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1 || info.ID == nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1 {
		name += "+me"
	}
	return name
}
