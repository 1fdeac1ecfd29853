package dra

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/deviceattribute"
	"k8s.io/utils/ptr"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// DriverName is NVIDIA's GPU DRA driver; Gantry's node agent publishes under it, so
// DeviceClasses and claims written for NVIDIA's driver select Gantry's devices.
const DriverName = "gpu.nvidia.com"

// Attribute names. Unqualified ones belong to the driver's domain (a CEL selector
// reads them as device.attributes["gpu.nvidia.com"].productName) and mean what
// NVIDIA's driver means by them.
const (
	AttrType                  resourcev1.QualifiedName = "type" // DeviceTypeGPU or DeviceTypeMIG
	AttrUUID                  resourcev1.QualifiedName = "uuid"
	AttrProductName           resourcev1.QualifiedName = "productName"
	AttrBrand                 resourcev1.QualifiedName = "brand"
	AttrArchitecture          resourcev1.QualifiedName = "architecture"
	AttrCUDAComputeCapability resourcev1.QualifiedName = "cudaComputeCapability" // version
	AttrDriverVersion         resourcev1.QualifiedName = "driverVersion"         // version
	AttrCUDADriverVersion     resourcev1.QualifiedName = "cudaDriverVersion"     // version
	AttrIndex                 resourcev1.QualifiedName = "index"                 // GPU index (int)
	AttrMinor                 resourcev1.QualifiedName = "minor"                 // device minor (int)
	AttrPCIeBusID             resourcev1.QualifiedName = "pcieBusID"
	AttrParentUUID            resourcev1.QualifiedName = "parentUUID"  // MIG: the GPU's UUID
	AttrParentIndex           resourcev1.QualifiedName = "parentIndex" // MIG: the GPU's index (int)
	AttrProfile               resourcev1.QualifiedName = "profile"     // MIG: "1g.10gb"
	// AttrPCIeRoot is Kubernetes' standard attribute for the PCIe root complex
	// ("pci0000:3a"), for matchAttribute constraints across drivers.
	AttrPCIeRoot = deviceattribute.StandardDeviceAttributePCIeRoot
)

// Gantry's own attributes, qualified with its domain: facts NVIDIA's driver does not
// publish but Gantry's device model places by.
const (
	// AttrModel is the devices-catalog model ID ("H100-SXM5-80GB", or a generic
	// model's ID), so a slice reads back into exactly the model it was written from.
	AttrModel resourcev1.QualifiedName = "gantry.dev/model"
	// AttrNVLinkDomain (int) groups GPUs joined by NVLink: matchAttribute on it keeps a
	// claim's GPUs in one domain.
	AttrNVLinkDomain resourcev1.QualifiedName = "gantry.dev/nvlinkDomain"
	// AttrPCIeSwitch (int) groups GPUs behind one PCIe switch.
	AttrPCIeSwitch resourcev1.QualifiedName = "gantry.dev/pcieSwitch"
)

// Device types (the type attribute), as NVIDIA's driver writes them.
const (
	DeviceTypeGPU = "gpu"
	DeviceTypeMIG = "mig"
)

// Capacity names: the device's memory in bytes, and for a MIG instance one
// memorySlice<i> of 1 per memory slice it occupies (its placement, as NVIDIA's driver
// announces it).
const (
	CapacityMemory            resourcev1.QualifiedName = "memory"
	capacityMemorySlicePrefix                          = "memorySlice"
)

// DeviceFor is the DRA device of GPU g (inst nil) or of its MIG instance inst, as a
// node without host facts publishes it: for evaluating selectors against a device
// without a node. A model the catalog does not know gives only the GPU's own
// attributes.
func DeviceFor(g devices.GPU, inst *devices.Instance) resourcev1.Device {
	m, err := devices.LookupModel(string(g.Model))
	if err != nil {
		m = devices.Model{ID: g.Model}
	}
	return buildDevice(g, m, inst, deviceFacts{})
}

// deviceFacts are the checked host facts one device is built with.
type deviceFacts struct {
	driver, cuda string
	gpu          GPUFacts
}

// buildDevice builds one device of a model-m GPU.
func buildDevice(g devices.GPU, m devices.Model, inst *devices.Instance, f deviceFacts) resourcev1.Device {
	attrs := gpuAttributes(g, m, f)
	if inst == nil {
		attrs[AttrType] = str(DeviceTypeGPU)
		attrs[AttrIndex], attrs[AttrMinor] = integer(g.Index), integer(g.Index)
		setString(attrs, AttrUUID, g.UUID)
		return resourcev1.Device{Name: gpuName(g.Index), Attributes: attrs,
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{CapacityMemory: memory(m.Memory)}}
	}
	attrs[AttrType] = str(DeviceTypeMIG)
	attrs[AttrProfile] = str(inst.Profile)
	attrs[AttrParentIndex] = integer(g.Index)
	setString(attrs, AttrParentUUID, g.UUID)
	setString(attrs, AttrUUID, f.gpu.MIGUUIDs[*inst])
	return resourcev1.Device{Name: migName(g.Index, m, *inst), Attributes: attrs, Capacity: migCapacity(m, *inst)}
}

// gpuAttributes are the attributes a GPU and its MIG instances share.
func gpuAttributes(g devices.GPU, m devices.Model, f deviceFacts) map[resourcev1.QualifiedName]resourcev1.DeviceAttribute {
	attrs := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		AttrModel:        str(string(m.ID)),
		AttrNVLinkDomain: integer(g.NVLinkDomain),
		AttrPCIeSwitch:   integer(g.PCIeSwitch),
		AttrPCIeRoot:     str(pcieRoot(g, f.gpu)),
	}
	setString(attrs, AttrProductName, firstNonEmpty(f.gpu.ProductName, productName(m)))
	setString(attrs, AttrBrand, brand(m))
	setString(attrs, AttrArchitecture, architecture(m))
	setString(attrs, AttrPCIeBusID, f.gpu.PCIBusID)
	if m.ComputeMajor > 0 {
		attrs[AttrCUDAComputeCapability] = version(fmt.Sprintf("%d.%d.0", m.ComputeMajor, m.ComputeMinor))
	}
	if f.driver != "" {
		attrs[AttrDriverVersion] = version(f.driver)
	}
	if f.cuda != "" {
		attrs[AttrCUDADriverVersion] = version(f.cuda)
	}
	return attrs
}

// migCapacity is a MIG instance's memory and the memory slices it occupies.
func migCapacity(m devices.Model, in devices.Instance) map[resourcev1.QualifiedName]resourcev1.DeviceCapacity {
	caps := map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{}
	p, ok := m.Profile(in.Profile)
	if !ok {
		return caps
	}
	caps[CapacityMemory] = memory(p.MemoryMiB)
	for s := in.Start; s < in.Start+p.MemorySlices; s++ {
		caps[resourcev1.QualifiedName(fmt.Sprintf("%s%d", capacityMemorySlicePrefix, s))] =
			resourcev1.DeviceCapacity{Value: *resource.NewQuantity(1, resource.DecimalSI)}
	}
	return caps
}

// pcieRoot is the GPU's PCIe root complex: NVML's, or else one per PCIe switch of the
// device model, in the attribute's pci<domain>:<bus> form, so matchAttribute groups the
// GPUs the model groups.
func pcieRoot(g devices.GPU, f GPUFacts) string {
	if f.PCIeRoot != "" {
		return f.PCIeRoot
	}
	return fmt.Sprintf("pci%04x:%02x", 0, g.PCIeSwitch)
}

// productName is NVML's device name as far as the catalog can tell: its first GPU
// Feature Discovery product with the dash after the vendor turned back into a space
// ("NVIDIA-A100-SXM4-40GB" -> "NVIDIA A100-SXM4-40GB"). GFD turned every space into a
// dash, so the rest cannot be told apart; the node agent passes NVML's own name.
func productName(m devices.Model) string {
	if len(m.Products) == 0 {
		return ""
	}
	p := m.Products[0]
	for _, vendor := range []string{"NVIDIA-", "Tesla-"} {
		if rest, ok := strings.CutPrefix(p, vendor); ok {
			return strings.TrimSuffix(vendor, "-") + " " + rest
		}
	}
	return p
}

// brand is NVML's brand as go-nvlib spells it: data-centre GPUs since Ampere report
// "Nvidia", the Tesla-named boards before them "Tesla".
func brand(m devices.Model) string {
	if m.IsGeneric() || m.ID == "" {
		return ""
	}
	if len(m.Products) > 0 && strings.HasPrefix(m.Products[0], "Tesla-") {
		return "Tesla"
	}
	return "Nvidia"
}

// architecture is NVML's architecture as go-nvlib spells it.
func architecture(m devices.Model) string {
	switch m.Family {
	case "", "Unknown", devices.GenericFamily:
		return ""
	case "Ada":
		return "Ada Lovelace"
	}
	return m.Family
}

func memory(mib resources.MiB) resourcev1.DeviceCapacity {
	return resourcev1.DeviceCapacity{Value: *resource.NewQuantity(int64(mib)<<20, resource.BinarySI)}
}

func str(s string) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{StringValue: ptr.To(s)}
}

func integer(i int) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{IntValue: ptr.To(int64(i))}
}

func version(v string) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{VersionValue: ptr.To(v)}
}

// setString sets a string attribute unless the value is unknown (empty).
func setString(attrs map[resourcev1.QualifiedName]resourcev1.DeviceAttribute, name resourcev1.QualifiedName, v string) {
	if v != "" {
		attrs[name] = str(v)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
