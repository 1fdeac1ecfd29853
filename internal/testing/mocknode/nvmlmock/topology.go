package nvmlmock

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// extendTopology adds the GPU's PCI bus ID to GetPciInfo and NVLink links to the
// machine's NVSwitches.
func (s *Server) extendTopology(g *gpu) {
	d := g.dev
	pci := d.GetPciInfoFunc
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		p, r := pci()
		if r != nvml.SUCCESS {
			return p, r
		}
		return withBusID(p, d.PciBusID), nvml.SUCCESS
	}
	d.GetNvLinkStateFunc = func(link int) (nvml.EnableState, nvml.Return) {
		if link < 0 || link >= g.links {
			return nvml.FEATURE_DISABLED, nvml.ERROR_INVALID_ARGUMENT
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if g.linksDown {
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		}
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	d.GetNvLinkRemotePciInfoFunc = func(link int) (nvml.PciInfo, nvml.Return) {
		if link < 0 || link >= g.links {
			return nvml.PciInfo{}, nvml.ERROR_INVALID_ARGUMENT
		}
		// NVSwitches sit on buses 0xc0 and up, apart from every mock's GPUs.
		return withBusID(nvml.PciInfo{}, fmt.Sprintf("0000:%02X:00.0", 0xc0+link%g.switches)), nvml.SUCCESS
	}
}

// withBusID fills p's address fields from a "DDDD:BB:DD.F" bus ID.
func withBusID(p nvml.PciInfo, busID string) nvml.PciInfo {
	id := fmt.Sprintf("0000%s", busID) // NVML's eight-digit domain
	for i := range p.BusId {
		p.BusId[i] = 0
	}
	for i := 0; i < len(id) && i < len(p.BusId)-1; i++ {
		p.BusId[i] = int8(id[i])
	}
	var dom, bus, dev, fn uint32
	if _, err := fmt.Sscanf(busID, "%x:%x:%x.%x", &dom, &bus, &dev, &fn); err == nil {
		p.Domain, p.Bus, p.Device = dom, bus, dev
	}
	return p
}
