package dra

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// HostFacts are what only the node itself knows about its GPUs (NVML's answers), beyond
// the devices.GPU values every stage shares. The node agent passes them so its slice
// carries the values NVIDIA's driver would publish; without them the inventory writes
// what the catalog and the GPUs imply and leaves the rest out.
type HostFacts struct {
	// DriverVersion is the kernel driver ("550.54.15", leading zeros allowed as NVML
	// writes them); CUDADriverVersion the CUDA version it supports ("12.4").
	DriverVersion     string
	CUDADriverVersion string
	// GPUs are per-GPU facts by GPU index.
	GPUs map[int]GPUFacts
}

// GPUFacts are one GPU's facts.
type GPUFacts struct {
	// ProductName is NVML's device name ("NVIDIA H100 80GB HBM3").
	ProductName string
	// PCIBusID is the GPU's PCI address ("0000:3b:00.0"); PCIeRoot its PCIe root
	// complex as resource.kubernetes.io/pcieRoot spells it ("pci0000:3a").
	PCIBusID string
	PCIeRoot string
	// MIGUUIDs are the UUIDs of the GPU's live MIG devices.
	MIGUUIDs map[devices.Instance]string
}

// Option configures a NodeInventory.
type Option func(*options)

type options struct {
	facts HostFacts
}

// WithHostFacts adds the node's NVML facts to its devices' attributes.
func WithHostFacts(f HostFacts) Option {
	return func(o *options) { o.facts = f }
}

// semver turns a dotted version as NVML writes it into the strict semantic version a
// DRA version attribute must hold: "535.129.03" -> "535.129.3", "12.4" -> "12.4.0".
func semver(v string) (string, error) {
	parts := strings.Split(strings.TrimSpace(v), ".")
	if len(parts) < 1 || len(parts) > 3 {
		return "", fmt.Errorf("version %q: want <major>[.<minor>[.<patch>]]", v)
	}
	nums := [3]int{}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || !isDigits(p) {
			return "", fmt.Errorf("version %q: %q is not a number", v, p)
		}
		nums[i] = n
	}
	return fmt.Sprintf("%d.%d.%d", nums[0], nums[1], nums[2]), nil
}

// check validates the facts once, so building devices cannot fail on them.
func (f HostFacts) check() (driver, cuda string, err error) {
	if f.DriverVersion != "" {
		if driver, err = semver(f.DriverVersion); err != nil {
			return "", "", fmt.Errorf("driver version: %w", err)
		}
	}
	if f.CUDADriverVersion != "" {
		if cuda, err = semver(f.CUDADriverVersion); err != nil {
			return "", "", fmt.Errorf("CUDA driver version: %w", err)
		}
	}
	return driver, cuda, nil
}
