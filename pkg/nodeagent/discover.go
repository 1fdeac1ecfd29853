package nodeagent

import (
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Discovery is what the agent found on the node.
type Discovery struct {
	// Model is the devices-catalog model of the node's GPUs; Product is the GFD
	// nvidia.com/gpu.product value ("NVIDIA-A100-SXM4-40GB").
	Model   devices.Model
	Product string
	// DriverVersion is the kernel driver ("535.129.03"); CUDAMajor/CUDAMinor the CUDA
	// version the driver supports.
	DriverVersion        string
	CUDAMajor, CUDAMinor int
	// MIGCapable is true when the GPUs report a MIG mode.
	MIGCapable bool
	// GPUs, by NVML index.
	GPUs []GPUInfo
	// Facts are NVML's compute capability and MIG profile attributes, for GFD's labels;
	// the caller adds the machine type (DMI), which is not NVML's.
	Facts Facts
}

// GPUInfo is one discovered GPU: the device-model view plus what the node agent
// needs for the device plugin.
type GPUInfo struct {
	devices.GPU
	BusID      string
	Memory     resources.MiB
	MIGEnabled bool
	// Profiles are the GPU-instance profiles NVML offers on the GPU (MIG-capable GPUs;
	// MIG mode may be off), in GPU_INSTANCE_PROFILE_* order.
	Profiles []MIGProfile
	// MIG lists the GPU's MIG devices, sorted by start slot.
	MIG []MIGDevice
}

// MIGDevice is one MIG device: the instance in Gantry's terms and NVML's names for it.
type MIGDevice struct {
	Instance          devices.Instance
	UUID              string
	GpuInstanceID     int
	ComputeInstanceID int
	// Memory is NVML's figure for the profile (MemorySizeMB), not the one in its name.
	Memory resources.MiB
}

// Discover reads the node's GPUs through lib, which the caller has initialised. sharing
// is the node's configured sharing mode; GPUs whose MIG mode is on get a MIG sharing with
// sharing's MIG strategy and their live instances as the layout. Mixed GPU models are an
// error (the device plugin and GFD labels describe one model per node).
func Discover(lib nvml.Interface, sharing devices.Sharing) (*Discovery, error) {
	d := &Discovery{}
	var err error
	if d.DriverVersion, err = driverVersion(lib); err != nil {
		return nil, err
	}
	cuda, r := lib.SystemGetCudaDriverVersion()
	if r != nvml.SUCCESS {
		return nil, nvmlError(r, "reading the CUDA driver version")
	}
	d.CUDAMajor, d.CUDAMinor = cuda/1000, cuda%1000/10
	n, r := lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		return nil, nvmlError(r, "counting GPUs")
	}
	handles := make([]nvml.Device, n)
	for i := range handles {
		if handles[i], r = lib.DeviceGetHandleByIndex(i); r != nvml.SUCCESS {
			return nil, nvmlError(r, "GPU %d: getting its handle", i)
		}
		g, err := d.readGPU(i, handles[i], sharing)
		if err != nil {
			return nil, err
		}
		d.GPUs = append(d.GPUs, g)
	}
	if err := assignTopology(d.GPUs, handles); err != nil {
		return nil, err
	}
	if n > 0 {
		d.Facts = readFacts(handles[0], d.GPUs[0].Profiles)
	}
	return d, nil
}

// readFacts reads what GFD labels from NVML: the compute capability (zero when NVML
// cannot say; the catalog's then stands) and each MIG profile's engines and
// multiprocessors, from the profile info NVML reports whether or not MIG is on.
func readFacts(h nvml.Device, profiles []MIGProfile) Facts {
	var f Facts
	if major, minor, r := h.GetCudaComputeCapability(); r == nvml.SUCCESS {
		f.ComputeMajor, f.ComputeMinor = major, minor
	}
	for _, p := range profiles {
		if f.MIG == nil {
			f.MIG = map[string]MIGAttributes{}
		}
		f.MIG[p.Name] = MIGAttributes{
			Multiprocessors: int(p.raw.MultiprocessorCount), ComputeInstanceSlices: int(p.raw.SliceCount),
			CopyEngines: int(p.raw.CopyEngineCount), Decoders: int(p.raw.DecoderCount), Encoders: int(p.raw.EncoderCount),
			JPEGDecoders: int(p.raw.JpegCount), OFAs: int(p.raw.OfaCount),
		}
	}
	return f
}

func driverVersion(lib nvml.Interface) (string, error) {
	v, r := lib.SystemGetDriverVersion()
	if r != nvml.SUCCESS {
		return "", nvmlError(r, "reading the driver version")
	}
	return v, nil
}

// readGPU reads one GPU's identity, memory, model and MIG state.
func (d *Discovery) readGPU(i int, h nvml.Device, sharing devices.Sharing) (GPUInfo, error) {
	name, r := h.GetName()
	if r != nvml.SUCCESS {
		return GPUInfo{}, nvmlError(r, "GPU %d: reading its name", i)
	}
	// GFD's product label is the NVML name with spaces turned into dashes.
	product := strings.ReplaceAll(strings.TrimSpace(name), " ", "-")
	model, err := devices.LookupModel(product)
	if err != nil {
		return GPUInfo{}, fmt.Errorf("GPU %d (%s): %w", i, name, err)
	}
	if d.Product == "" {
		d.Product, d.Model = product, model
	} else if model.ID != d.Model.ID {
		return GPUInfo{}, fmt.Errorf("GPU %d is a %s but GPU 0 is a %s: one GPU model per node is supported", i, model.ID, d.Model.ID)
	}
	g := GPUInfo{GPU: devices.GPU{Index: i, Model: model.ID, Sharing: sharing, Healthy: true}}
	if g.UUID, r = h.GetUUID(); r != nvml.SUCCESS {
		return GPUInfo{}, nvmlError(r, "GPU %d: reading its UUID", i)
	}
	mem, r := h.GetMemoryInfo()
	if r != nvml.SUCCESS {
		return GPUInfo{}, nvmlError(r, "GPU %d: reading its memory", i)
	}
	g.Memory = resources.MiB(mem.Total >> 20)
	pci, r := h.GetPciInfo()
	if r != nvml.SUCCESS {
		return GPUInfo{}, nvmlError(r, "GPU %d: reading its PCI address", i)
	}
	g.BusID = normalizeBusID(busID(pci))
	if err := d.readMIG(&g, h, sharing, mem.Total); err != nil {
		return GPUInfo{}, err
	}
	return g, nil
}

// nvmlError turns a failed NVML call into an error saying what was being done; the
// Return stays errors.Is-able.
func nvmlError(r nvml.Return, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), r)
}
