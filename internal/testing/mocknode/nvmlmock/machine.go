package nvmlmock

import (
	"fmt"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// The machines, by the names `gantry node-agent --mock` takes.
const (
	DGXA100 = "dgx-a100"
	DGXH100 = "dgx-h100"
	DGXH200 = "dgx-h200"
	DGXB200 = "dgx-b200"
)

// NoInstance is the GPU- and compute-instance ID of an event about a whole GPU.
const NoInstance uint32 = 0xFFFFFFFF

// Machines lists the machine names New accepts.
func Machines() []string { return []string{DGXA100, DGXH100, DGXH200, DGXB200} }

// spec is what a machine adds to its go-nvml mock.
type spec struct {
	build func() *server.Server
	// name replaces the mock's GPU name where it is not what NVML reports on the real
	// GPU ("" keeps the mock's).
	name string
	// uuidTag makes the machine's GPU UUIDs distinct from other machines'.
	uuidTag uint32
	// busIDs are the GPUs' PCI addresses (nil keeps the mock's).
	busIDs []string
	// pciID replaces the mock's PCI device ID where it is not the real board's (0 keeps
	// it), so mig-parted's device filters select the GPUs as on the real machine.
	pciID uint32
	// links per GPU, each to NVSwitch link%switches.
	links, switches int
}

// machineSpec returns the spec of a machine. DGX A100: 12 NVLinks per GPU to 6
// NVSwitches and the DGX A100's PCI addresses; DGX H100/H200: 18 links to 4 NVSwitches;
// DGX B200: 18 links to 2 NVSwitches.
func machineSpec(machine string) (spec, error) {
	switch machine {
	case DGXA100:
		return spec{build: dgxa100.New, name: "NVIDIA A100-SXM4-40GB", uuidTag: 0xa100,
			busIDs: []string{"0000:07:00.0", "0000:0F:00.0", "0000:47:00.0", "0000:4E:00.0",
				"0000:87:00.0", "0000:90:00.0", "0000:B7:00.0", "0000:BD:00.0"},
			links: 12, switches: 6}, nil
	case DGXH100:
		return spec{build: dgxh100.New, uuidTag: 0x4100, links: 18, switches: 4}, nil
	case DGXH200:
		return spec{build: dgxh200.New, uuidTag: 0x4200, pciID: 0x233510DE, links: 18, switches: 4}, nil
	case DGXB200:
		return spec{build: dgxb200.New, name: "NVIDIA B200", uuidTag: 0xb200, pciID: 0x290110DE, links: 18, switches: 2}, nil
	}
	return spec{}, fmt.Errorf("unknown mock machine %q: want one of %s", machine, strings.Join(Machines(), ", "))
}

// Server is one mock machine. It is an nvml.Interface; Init must be called first, as
// with the real library.
type Server struct {
	*server.Server
	// mu guards the extension state below and serialises MIG changes.
	mu   sync.Mutex
	gpus []*gpu
	sets []*eventSet
}

// gpu is the extension state of one mock GPU.
type gpu struct {
	dev   *server.Device
	index int
	tag   uint32
	// pending is the MIG mode that takes effect at the next reset when resetNeeded.
	pending     int
	resetNeeded bool
	links       int
	switches    int
	linksDown   bool
	// noEventTypes and refuseRegister make the GPU's events impossible to watch.
	noEventTypes, refuseRegister bool
}

// New builds the named machine.
func New(machine string) (*Server, error) {
	sp, err := machineSpec(machine)
	if err != nil {
		return nil, err
	}
	s := &Server{Server: sp.build()}
	for i, d := range s.Devices {
		dev := d.(*server.Device)
		if sp.name != "" {
			dev.Config.Name = sp.name
		}
		if sp.busIDs != nil {
			dev.PciBusID = sp.busIDs[i]
		}
		if sp.pciID != 0 {
			dev.Config.PciDeviceId = sp.pciID
		}
		dev.UUID = fmt.Sprintf("GPU-%08x-%04x-4000-8000-%012x", sp.uuidTag, i, i)
		g := &gpu{dev: dev, index: i, tag: sp.uuidTag, links: sp.links, switches: sp.switches}
		s.gpus = append(s.gpus, g)
		s.extendMIG(g)
		s.extendMIGDevices(g)
		s.extendTopology(g)
		s.extendEvents(g)
	}
	s.EventSetCreateFunc = s.createEventSet
	return s, nil
}

// gpuAt returns GPU i or panics: the knobs below are test set-up, where a wrong index is
// a bug in the test.
func (s *Server) gpuAt(i int) *gpu {
	if i < 0 || i >= len(s.gpus) {
		panic(fmt.Sprintf("nvmlmock: no GPU %d (the machine has %d)", i, len(s.gpus)))
	}
	return s.gpus[i]
}

// SetName makes GPU i report another product name.
func (s *Server) SetName(i int, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gpuAt(i).dev.Config.Name = name
}

// SetNVLinksDown takes every NVLink link of GPU i down.
func (s *Server) SetNVLinksDown(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gpuAt(i).linksDown = true
}

// GPUCount is the machine's number of GPUs.
func (s *Server) GPUCount() int { return len(s.gpus) }
