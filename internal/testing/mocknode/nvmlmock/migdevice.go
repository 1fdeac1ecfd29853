package nvmlmock

import (
	"fmt"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// extendMIGDevices adds MIG device handles: one per compute instance, in GPU-instance
// then compute-instance ID order, as NVML enumerates them.
func (s *Server) extendMIGDevices(g *gpu) {
	d := g.dev
	d.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return false, nvml.SUCCESS }
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) {
		n := 0
		for _, p := range d.Config.MIGProfiles.GpuInstanceProfiles {
			n = max(n, int(p.InstanceCount))
		}
		return n, nvml.SUCCESS
	}
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if g.migMode() != nvml.DEVICE_MIG_ENABLE {
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
		max, _ := d.GetMaxMigDeviceCount()
		if i < 0 || i >= max {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		cis := g.computeInstances()
		if i >= len(cis) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return g.migDevice(cis[i]), nvml.SUCCESS
	}
}

// computeInstances lists every compute instance of the GPU in NVML's order.
func (g *gpu) computeInstances() []*server.ComputeInstance {
	var out []*server.ComputeInstance
	for _, gi := range g.instances() {
		gi.RLock()
		var cis []*server.ComputeInstance
		for ci := range gi.ComputeInstances {
			cis = append(cis, ci)
		}
		gi.RUnlock()
		sort.Slice(cis, func(i, j int) bool { return cis[i].Info.Id < cis[j].Info.Id })
		out = append(out, cis...)
	}
	return out
}

// migDevice is the MIG device handle of a compute instance. Its UUID is stable for the
// GPU, GPU-instance and compute-instance IDs.
func (g *gpu) migDevice(ci *server.ComputeInstance) nvml.Device {
	gi := ci.Info.GpuInstance.(*server.GpuInstance)
	giID, ciID := gi.Info.Id, ci.Info.Id
	profile := g.dev.Config.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)]
	uuid := fmt.Sprintf("MIG-%08x-%04x-4%03x-8%03x-%012x", g.tag, g.index, giID, ciID, uint64(g.index)<<16|uint64(giID)<<8|uint64(ciID))
	return &mock.Device{
		GetUUIDFunc:                            func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		IsMigDeviceHandleFunc:                  func() (bool, nvml.Return) { return true, nvml.SUCCESS },
		GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) { return g.dev, nvml.SUCCESS },
		GetGpuInstanceIdFunc:                   func() (int, nvml.Return) { return int(giID), nvml.SUCCESS },
		GetComputeInstanceIdFunc:               func() (int, nvml.Return) { return int(ciID), nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: profile.MemorySizeMB << 20, Free: profile.MemorySizeMB << 20}, nvml.SUCCESS
		},
	}
}
