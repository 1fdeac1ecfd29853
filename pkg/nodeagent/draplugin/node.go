package draplugin

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

// Node is what the plugin publishes and prepares: the node's GPUs as the device model
// sees them and the NVML facts only the node knows (driver version, PCI addresses, MIG
// device UUIDs).
type Node struct {
	Name  string
	GPUs  []devices.GPU
	Facts dra.HostFacts
}

// PCIeRootFunc finds a PCI device's PCIe root complex ("pci0000:3a") from its bus ID;
// on a node it reads sysfs (k8s.io/dynamic-resource-allocation/deviceattribute).
type PCIeRootFunc func(busID string) (string, error)

// NodeFromDiscovery is the node the agent discovered. pcieRoot may be nil (or fail for
// a GPU), and the inventory then groups GPUs by the device model's PCIe switches.
func NodeFromDiscovery(name string, d *nodeagent.Discovery, pcieRoot PCIeRootFunc) Node {
	n := Node{Name: name, Facts: dra.HostFacts{DriverVersion: d.DriverVersion, GPUs: map[int]dra.GPUFacts{}}}
	if d.CUDAMajor > 0 {
		n.Facts.CUDADriverVersion = fmt.Sprintf("%d.%d", d.CUDAMajor, d.CUDAMinor)
	}
	for _, g := range d.GPUs {
		n.GPUs = append(n.GPUs, g.GPU)
		f := dra.GPUFacts{PCIBusID: g.BusID, MIGUUIDs: map[devices.Instance]string{}}
		if pcieRoot != nil && g.BusID != "" {
			if root, err := pcieRoot(g.BusID); err == nil {
				f.PCIeRoot = root
			}
		}
		for _, m := range g.MIG {
			f.MIGUUIDs[m.Instance] = m.UUID
		}
		n.Facts.GPUs[g.Index] = f
	}
	return n
}
