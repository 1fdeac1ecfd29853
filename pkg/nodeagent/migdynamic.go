package nodeagent

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// A GPU whose MIG layout is chosen at allocation time (all-dynamic) gets one MIG device
// at a time: the DRA kubelet plugin creates the one a claim was allocated when it
// prepares the claim and destroys it when it unprepares it, and turns MIG mode off for a
// claim given the GPU whole. These reuse the MIG manager's NVML code (migapply.go), one
// instance instead of a whole layout.

// CreateMIGDevice makes sure GPU index holds a GPU instance of in.Profile at slot
// in.Start with a compute instance spanning it, turning MIG mode on if it is off, and
// returns its MIG device's UUID. An instance already there (created by a prepare whose
// record was lost) is adopted, so a repeated call creates nothing twice. Errors name
// the GPU; a MIG mode change that waits for a GPU reset wraps ErrResetRequired.
func CreateMIGDevice(lib nvml.Interface, model devices.Model, index int, in devices.Instance) (string, error) {
	uuid, err := createMIGDevice(lib, model, index, in)
	if err != nil {
		return "", fmt.Errorf("GPU %d: MIG device %s: %w", index, in, err)
	}
	return uuid, nil
}

func createMIGDevice(lib nvml.Interface, model devices.Model, index int, in devices.Instance) (string, error) {
	h, offered, err := openMIG(lib, index, true)
	if err != nil {
		return "", err
	}
	gi, found, err := instanceAt(h, offered, in)
	if err != nil {
		return "", err
	}
	if !found {
		if err := createInstance(h, model, offered, in); err != nil {
			return "", err
		}
		if gi, found, err = instanceAt(h, offered, in); err != nil || !found {
			return "", fmt.Errorf("not found after creating it (%v)", err)
		}
	}
	p, _ := findProfile(offered, in.Profile) // instanceAt found it
	return instanceUUID(index, h, gi, p.raw.SliceCount, in)
}

// DestroyMIGDevice removes the GPU instance of in.Profile at slot in.Start of GPU index
// and its compute instances. None there (destroyed before) is success.
func DestroyMIGDevice(lib nvml.Interface, index int, in devices.Instance) error {
	h, offered, err := openMIG(lib, index, false)
	if err != nil {
		return fmt.Errorf("GPU %d: MIG device %s: %w", index, in, err)
	}
	if h == nil { // MIG off: nothing carved
		return nil
	}
	gi, found, err := instanceAt(h, offered, in)
	if err == nil && found {
		err = destroyGI(gi)
	}
	if err != nil {
		return fmt.Errorf("GPU %d: MIG device %s: %w", index, in, err)
	}
	return nil
}

// openMIG is GPU index's handle and offered profiles. With enable, MIG mode is turned
// on if it is off; without, a GPU with MIG off gives a nil handle.
func openMIG(lib nvml.Interface, index int, enable bool) (nvml.Device, []MIGProfile, error) {
	h, r := lib.DeviceGetHandleByIndex(index)
	if r != nvml.SUCCESS {
		return nil, nil, nvmlError(r, "getting the handle")
	}
	current, pending, r := h.GetMigMode()
	if r != nvml.SUCCESS {
		return nil, nil, nvmlError(r, "reading the MIG mode")
	}
	if current != nvml.DEVICE_MIG_ENABLE || pending != nvml.DEVICE_MIG_ENABLE {
		if !enable {
			return nil, nil, nil
		}
		if err := setMIGMode(h, nvml.DEVICE_MIG_ENABLE); err != nil {
			return nil, nil, err
		}
	}
	mem, r := h.GetMemoryInfo()
	if r != nvml.SUCCESS {
		return nil, nil, nvmlError(r, "reading memory")
	}
	offered, err := readProfiles(index, h, mem.Total)
	return h, offered, err
}

// instanceAt finds the GPU instance of in.Profile placed at in.Start.
func instanceAt(h nvml.Device, offered []MIGProfile, in devices.Instance) (nvml.GpuInstance, bool, error) {
	p, ok := findProfile(offered, in.Profile)
	if !ok {
		return nil, false, fmt.Errorf("NVML offers no MIG profile %s (it offers %v)", in.Profile, profileNames(offered))
	}
	info := p.raw
	gis, r := h.GetGpuInstances(&info)
	if r != nvml.SUCCESS {
		return nil, false, nvmlError(r, "listing GPU instances of %s", in.Profile)
	}
	for _, gi := range gis {
		gii, r := gi.GetInfo()
		if r != nvml.SUCCESS {
			return nil, false, nvmlError(r, "reading a GPU instance of %s", in.Profile)
		}
		if int(gii.Placement.Start) == in.Start {
			return gi, true, nil
		}
	}
	return nil, false, nil
}

// instanceUUID is the UUID of gi's MIG device, creating its compute instance when an
// interrupted create left the GPU instance without one.
func instanceUUID(index int, h nvml.Device, gi nvml.GpuInstance, slices uint32, in devices.Instance) (string, error) {
	gii, r := gi.GetInfo()
	if r != nvml.SUCCESS {
		return "", nvmlError(r, "reading the GPU instance")
	}
	uuids, err := migUUIDs(index, h)
	if err != nil {
		return "", err
	}
	if u, ok := uuids[int(gii.Id)]; ok {
		return u.uuid, nil
	}
	ciInfo, r := gi.GetComputeInstanceProfileInfo(computeProfile(slices), nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if r != nvml.SUCCESS {
		return "", nvmlError(r, "reading the compute profile for %s", in)
	}
	if _, r := gi.CreateComputeInstance(&ciInfo); r != nvml.SUCCESS {
		return "", nvmlError(r, "creating the compute instance of %s", in)
	}
	if uuids, err = migUUIDs(index, h); err != nil {
		return "", err
	}
	u, ok := uuids[int(gii.Id)]
	if !ok {
		return "", fmt.Errorf("no MIG device for GPU instance %d after creating its compute instance", gii.Id)
	}
	return u.uuid, nil
}

// UseWholeGPU makes sure GPU index has MIG mode off, so that a container given the GPU
// whole sees it as one CUDA device: with MIG mode on, CUDA sees no GPU outside a MIG
// device. MIG off already (nothing pending) is success, so a repeated call changes
// nothing. While GPU instances are carved on it, it refuses and names them (NVML could
// not turn MIG off under them, and they are claims'); a change that waits for a GPU
// reset wraps ErrResetRequired. The next carving turns MIG mode back on
// (CreateMIGDevice).
func UseWholeGPU(lib nvml.Interface, index int) error {
	if err := useWholeGPU(lib, index); err != nil {
		return fmt.Errorf("GPU %d: turning MIG mode off to give the GPU whole: %w", index, err)
	}
	return nil
}

func useWholeGPU(lib nvml.Interface, index int) error {
	h, r := lib.DeviceGetHandleByIndex(index)
	if r != nvml.SUCCESS {
		return nvmlError(r, "getting the handle")
	}
	current, pending, r := h.GetMigMode()
	if r != nvml.SUCCESS {
		return nvmlError(r, "reading the MIG mode")
	}
	if current == nvml.DEVICE_MIG_DISABLE && pending == nvml.DEVICE_MIG_DISABLE {
		return nil
	}
	if current == nvml.DEVICE_MIG_ENABLE {
		carved, err := carvedInstances(index, h)
		if err != nil {
			return err
		}
		if len(carved) > 0 {
			return fmt.Errorf("MIG instances %v are carved on it", carved)
		}
	}
	return setMIGMode(h, nvml.DEVICE_MIG_DISABLE)
}

// carvedInstances lists the GPU instances of a GPU whose MIG mode is on.
func carvedInstances(index int, h nvml.Device) ([]devices.Instance, error) {
	mem, r := h.GetMemoryInfo()
	if r != nvml.SUCCESS {
		return nil, nvmlError(r, "reading memory")
	}
	offered, err := readProfiles(index, h, mem.Total)
	if err != nil {
		return nil, err
	}
	migs, err := readMIGDevices(index, h, offered)
	if err != nil {
		return nil, err
	}
	out := make([]devices.Instance, len(migs))
	for i, m := range migs {
		out[i] = m.Instance
	}
	return out, nil
}
