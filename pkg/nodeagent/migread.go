package nodeagent

import (
	"fmt"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// readMIG reads a GPU's MIG mode, offered profiles and live instances into g. A GPU
// with MIG on gets a MIG sharing whose custom layout is exactly its instances, so the
// device model offers what the GPU really has. On a node configured all-dynamic
// (devices.LayoutDynamic) every MIG GPU keeps that sharing and lists no instance,
// whatever is carved on it.
func (d *Discovery) readMIG(g *GPUInfo, h nvml.Device, sharing devices.Sharing, totalBytes uint64) error {
	current, _, r := h.GetMigMode()
	if r == nvml.ERROR_NOT_SUPPORTED {
		return nil
	}
	if r != nvml.SUCCESS {
		return nvmlError(r, "GPU %d: reading its MIG mode", g.Index)
	}
	d.MIGCapable = true
	var err error
	if g.Profiles, err = readProfiles(g.Index, h, totalBytes); err != nil {
		return err
	}
	if sharing.DynamicMIG() {
		// The layout is chosen at allocation time: instances there now were carved
		// for claims the DRA plugin prepared (its checkpoint keeps them), not a layout
		// to advertise, and MIG mode is turned on by the first carving if it is off.
		g.MIGEnabled = current == nvml.DEVICE_MIG_ENABLE
		g.Sharing = dynamicSharing(sharing)
		return nil
	}
	if current != nvml.DEVICE_MIG_ENABLE {
		if sharing.Mode == devices.MIG {
			g.Sharing = migSharing(sharing)
		}
		return nil
	}
	g.MIGEnabled = true
	if g.MIG, err = readMIGDevices(g.Index, h, g.Profiles); err != nil {
		return err
	}
	if err := checkCatalog(g, d.Model); err != nil {
		return err
	}
	profiles := make([]string, len(g.MIG))
	g.Instances = make([]devices.Instance, len(g.MIG))
	for i, m := range g.MIG {
		g.Instances[i], profiles[i] = m.Instance, m.Instance.Profile
	}
	g.Sharing = migSharing(sharing)
	if len(profiles) > 0 {
		g.Sharing.Layout, g.Sharing.CustomProfiles = devices.LayoutCustom, [][]string{profiles}
	}
	return nil
}

// checkCatalog refuses live instances of a profile pkg/devices does not know: the
// scheduler could neither advertise nor place them.
func checkCatalog(g *GPUInfo, model devices.Model) error {
	for _, m := range g.MIG {
		if _, ok := model.Profile(m.Instance.Profile); !ok {
			return fmt.Errorf("GPU %d (%s): MIG profile %s (instance at slot %d, GPU instance %d) is not in Gantry's %s catalog (known: %v)",
				g.Index, g.UUID, m.Instance.Profile, m.Instance.Start, m.GpuInstanceID, model.ID, model.ProfileNames())
		}
	}
	return nil
}

// readMIGDevices lists the GPU instances of every offered profile and names each after
// its first compute instance's MIG device UUID.
func readMIGDevices(gpu int, h nvml.Device, profiles []MIGProfile) ([]MIGDevice, error) {
	uuids, err := migUUIDs(gpu, h)
	if err != nil {
		return nil, err
	}
	var out []MIGDevice
	for _, p := range profiles {
		info := p.raw
		gis, r := h.GetGpuInstances(&info)
		if r != nvml.SUCCESS {
			return nil, nvmlError(r, "GPU %d: listing GPU instances of profile %s", gpu, p.Name)
		}
		for _, gi := range gis {
			gii, r := gi.GetInfo()
			if r != nvml.SUCCESS {
				return nil, nvmlError(r, "GPU %d: reading a GPU instance of profile %s", gpu, p.Name)
			}
			u := uuids[int(gii.Id)]
			out = append(out, MIGDevice{
				Instance:      devices.Instance{Profile: p.Name, Start: int(gii.Placement.Start)},
				UUID:          u.uuid,
				GpuInstanceID: int(gii.Id), ComputeInstanceID: u.ci,
				Memory: p.Memory,
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
		return nil, nvmlError(r, "GPU %d: reading its MIG device count", gpu)
	}
	out := map[int]migID{}
	for i := 0; i < max; i++ {
		m, r := h.GetMigDeviceHandleByIndex(i)
		if r == nvml.ERROR_NOT_FOUND || r == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if r != nvml.SUCCESS {
			return nil, nvmlError(r, "GPU %d: MIG device %d", gpu, i)
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

// dynamicSharing is a MIG GPU's sharing on a node configured all-dynamic: whole
// instances carved per claim (time-sliced MIG devices need a fixed layout, so the
// configured per-resource entries do not apply).
func dynamicSharing(s devices.Sharing) devices.Sharing {
	return devices.Sharing{Mode: devices.MIG, MIGStrategy: s.MIGStrategy, Layout: devices.LayoutDynamic}
}

// migSharing is a MIG GPU's sharing under the node's configured sharing, spelled as the
// scheduler spells it: mode mig, with the configured per-resource entries that name MIG
// devices (NVIDIA's config writes time-sliced MIG as time-slicing with MIG resources),
// so the agent's device model and the scheduler's agree on time-sliced MIG.
func migSharing(s devices.Sharing) devices.Sharing {
	out := devices.Sharing{Mode: devices.MIG, MIGStrategy: s.MIGStrategy, Layout: devices.LayoutDisabled}
	if s.EffectiveMode() != devices.TimeSlicing {
		return out
	}
	for _, r := range s.Resources {
		_, mig := r.Name.MIGProfile()
		if mig || (r.Name == resources.NvidiaGPU && s.EffectiveMIGStrategy() == devices.MIGSingle) {
			out.Resources = append(out.Resources, r)
		}
	}
	if len(out.Resources) > 0 {
		out.RenameByDefault, out.FailRequestsGreaterThanOne = s.RenameByDefault, s.FailRequestsGreaterThanOne
	}
	return out
}
