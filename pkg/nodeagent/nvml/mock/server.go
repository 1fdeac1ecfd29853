package mock

import (
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
)

// Server is the mock library: implements nvml.Interface. All state sits behind one
// mutex, so devices, instances and event sets may be used from several goroutines.
type Server struct {
	mu            sync.Mutex
	initialized   int
	driver        string
	cudaVersion   int
	gpus          []*Device
	eventSets     []*EventSet
	nvSwitchBuses []string
}

var _ nvml.Interface = (*Server)(nil)

// dgxA100Buses are the PCI bus numbers of the eight GPUs of a DGX A100, in NVML index
// order; two GPUs share each PCIe switch (07/0F, 47/4E, 87/90, B7/BD).
func dgxA100Buses() []uint32 { return []uint32{0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD} }

// dgxA100NVSwitchBuses are the six NVSwitches; every GPU has two of its twelve NVLink
// links on each switch.
func dgxA100NVSwitchBuses() []uint32 { return []uint32{0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9} }

// Driver and CUDA versions of the mock (R535, CUDA 12.2).
const (
	DGXA100Driver = "535.129.03"
	DGXA100CUDA   = 12020
	// A100Name is what nvmlDeviceGetName returns on the mock's GPUs.
	A100Name = "NVIDIA A100-SXM4-40GB"
	// A100MemoryMiB is the framebuffer NVML reports for one A100-SXM4-40GB.
	A100MemoryMiB = 40960
	// A100NVLinks is the number of NVLink links of an A100.
	A100NVLinks = 12
)

// NewDGXA100 returns a DGX A100 with MIG disabled on every GPU and all NVLinks up.
func NewDGXA100() *Server {
	s := &Server{driver: DGXA100Driver, cudaVersion: DGXA100CUDA}
	for _, b := range dgxA100NVSwitchBuses() {
		s.nvSwitchBuses = append(s.nvSwitchBuses, busID(b))
	}
	for i, b := range dgxA100Buses() {
		d := &Device{srv: s, index: i, bus: b, uuid: gpuUUID(i), name: A100Name, gis: map[uint32]*GpuInstance{}}
		for l := 0; l < A100NVLinks; l++ {
			d.links[l] = link{up: true, remote: s.nvSwitchBuses[l/2]}
		}
		s.gpus = append(s.gpus, d)
	}
	return s
}

func busID(bus uint32) string { return fmt.Sprintf("00000000:%02X:00.0", bus) }

// gpuUUID is a fixed, made-up UUID per GPU index, so outputs are reproducible.
func gpuUUID(i int) string {
	return fmt.Sprintf("GPU-a100a100-%04x-4%03x-8000-d6a0000000%02x", i, i, i)
}

// migUUID derives a stable MIG device UUID from the parent and the instance IDs.
func migUUID(parent string, gi, ci uint32) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", parent, gi, ci)
	v := h.Sum64()
	return fmt.Sprintf("MIG-%08x-%04x-5%03x-9%03x-%012x", uint32(v>>32), uint16(v>>16), gi&0xfff, ci&0xfff, v&0xffffffffffff)
}

// Init counts up like NVML's reference-counted init.
func (s *Server) Init() nvml.Return {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initialized++
	return nvml.SUCCESS
}

// Shutdown balances Init.
func (s *Server) Shutdown() nvml.Return {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.initialized == 0 {
		return nvml.ERROR_UNINITIALIZED
	}
	s.initialized--
	return nvml.SUCCESS
}

func (s *Server) ready() nvml.Return {
	if s.initialized == 0 {
		return nvml.ERROR_UNINITIALIZED
	}
	return nvml.SUCCESS
}

// SystemGetDriverVersion returns the mock's driver version.
func (s *Server) SystemGetDriverVersion() (string, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.ready(); r != nvml.SUCCESS {
		return "", r
	}
	return s.driver, nvml.SUCCESS
}

// SystemGetCudaDriverVersion returns the mock's CUDA version (1000*major + 10*minor).
func (s *Server) SystemGetCudaDriverVersion() (int, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.ready(); r != nvml.SUCCESS {
		return 0, r
	}
	return s.cudaVersion, nvml.SUCCESS
}

// DeviceGetCount is 8.
func (s *Server) DeviceGetCount() (int, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.ready(); r != nvml.SUCCESS {
		return 0, r
	}
	return len(s.gpus), nvml.SUCCESS
}

// DeviceGetHandleByIndex returns GPU index.
func (s *Server) DeviceGetHandleByIndex(index int) (nvml.Device, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.ready(); r != nvml.SUCCESS {
		return nil, r
	}
	if index < 0 || index >= len(s.gpus) {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return s.gpus[index], nvml.SUCCESS
}

// GPU returns the mock device itself, for tests that change it (links, events).
func (s *Server) GPU(index int) *Device { return s.gpus[index] }

// SetName changes what GPU index reports as its name (to simulate other or mixed models).
func (s *Server) SetName(index int, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gpus[index].name = name
}

// SetNVLinksDown takes every NVLink link of GPU index down (as after a link failure),
// so the GPU falls out of the NVLink domain.
func (s *Server) SetNVLinksDown(index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.gpus[index].links {
		s.gpus[index].links[l].up = false
	}
}
