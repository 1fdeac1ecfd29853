package nvmlmock

import (
	"maps"
	"slices"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// extendMIG adds NVML's MIG rules to one GPU: instances listed only while MIG is on
// (profiles are readable either way, as on an H100 with driver 580), placement checks,
// pending mode changes and GPU instances listed in ID order.
func (s *Server) extendMIG(g *gpu) {
	d := g.dev
	list := d.GetGpuInstancesFunc
	d.GetGpuInstancesFunc = func(info *nvml.GpuInstanceProfileInfo) ([]nvml.GpuInstance, nvml.Return) {
		if g.migMode() != nvml.DEVICE_MIG_ENABLE {
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
		gis, r := list(info)
		sort.Slice(gis, func(i, j int) bool {
			return gis[i].(*server.GpuInstance).Info.Id < gis[j].(*server.GpuInstance).Info.Id
		})
		return gis, r
	}
	d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
		for _, gi := range g.instances() {
			if int(gi.Info.Id) == id {
				return gi, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	create := d.CreateGpuInstanceWithPlacementFunc
	d.CreateGpuInstanceWithPlacementFunc = func(info *nvml.GpuInstanceProfileInfo, p *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if r := g.checkPlacement(info, p); r != nvml.SUCCESS {
			return nil, r
		}
		gi, r := create(info, p)
		if r == nvml.SUCCESS {
			guardDestroy(gi.(*server.GpuInstance))
		}
		return gi, r
	}
	d.CreateGpuInstanceFunc = func(info *nvml.GpuInstanceProfileInfo) (nvml.GpuInstance, nvml.Return) {
		if g.migMode() != nvml.DEVICE_MIG_ENABLE {
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
		for _, p := range d.Config.MIGProfiles.GpuInstancePlacements[int(info.Id)] {
			if gi, r := d.CreateGpuInstanceWithPlacement(info, &p); r == nvml.SUCCESS {
				return gi, r
			}
		}
		return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
	}
	s.extendMIGMode(g)
}

// extendMIGMode makes mode changes wait for a GPU reset when RequireReset was called,
// and refuses to turn MIG off while GPU instances exist.
func (s *Server) extendMIGMode(g *gpu) {
	d := g.dev
	set := d.SetMigModeFunc
	d.SetMigModeFunc = func(mode int) (nvml.Return, nvml.Return) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if mode != nvml.DEVICE_MIG_ENABLE && mode != nvml.DEVICE_MIG_DISABLE {
			return nvml.ERROR_INVALID_ARGUMENT, nvml.ERROR_INVALID_ARGUMENT
		}
		if mode == nvml.DEVICE_MIG_DISABLE && len(g.instances()) > 0 {
			return nvml.ERROR_IN_USE, nvml.ERROR_IN_USE
		}
		g.pending = mode
		if g.resetNeeded && mode != g.migMode() {
			return nvml.ERROR_RESET_REQUIRED, nvml.SUCCESS
		}
		return set(mode)
	}
	d.GetMigModeFunc = func() (int, int, nvml.Return) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return g.migMode(), g.pending, nvml.SUCCESS
	}
}

// RequireReset makes MIG mode changes on GPU i stay pending until ResetGPU, as on a GPU
// that a process holds.
func (s *Server) RequireReset(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gpuAt(i).resetNeeded = true
}

// ResetGPU applies GPU i's pending MIG mode, as a GPU reset does.
func (s *Server) ResetGPU(i int) {
	s.mu.Lock()
	g := s.gpuAt(i)
	g.resetNeeded = false
	mode := g.pending
	s.mu.Unlock()
	g.dev.SetMigMode(mode)
}

func (g *gpu) migMode() int {
	g.dev.RLock()
	defer g.dev.RUnlock()
	return g.dev.MigMode
}

// instances lists the GPU's GPU instances.
func (g *gpu) instances() []*server.GpuInstance {
	g.dev.RLock()
	defer g.dev.RUnlock()
	out := make([]*server.GpuInstance, 0, len(g.dev.GpuInstances))
	for gi := range g.dev.GpuInstances {
		out = append(out, gi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Info.Id < out[j].Info.Id })
	return out
}

// checkPlacement is NVML's refusal of a GPU instance: MIG off, a placement that is not
// one of the profile's possible placements, memory slices taken, or the GPU's compute
// slices, the profile's instance count or the media engines (OFA) exhausted.
func (g *gpu) checkPlacement(info *nvml.GpuInstanceProfileInfo, p *nvml.GpuInstancePlacement) nvml.Return {
	if g.migMode() != nvml.DEVICE_MIG_ENABLE {
		return nvml.ERROR_NOT_SUPPORTED
	}
	cfg := g.dev.Config.MIGProfiles
	if !possible(cfg.GpuInstancePlacements[int(info.Id)], p) {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	var compute, ofa, same uint32
	for _, gi := range g.instances() {
		q := gi.Info.Placement
		if p.Start < q.Start+q.Size && q.Start < p.Start+p.Size {
			return nvml.ERROR_INSUFFICIENT_RESOURCES
		}
		other := cfg.GpuInstanceProfiles[int(gi.Info.ProfileId)]
		compute += other.SliceCount
		ofa += other.OfaCount
		if gi.Info.ProfileId == info.Id {
			same++
		}
	}
	total, totalOFA := gpuTotals(cfg.GpuInstanceProfiles)
	if compute+info.SliceCount > total || ofa+info.OfaCount > totalOFA || same >= info.InstanceCount {
		return nvml.ERROR_INSUFFICIENT_RESOURCES
	}
	return nvml.SUCCESS
}

func possible(ps []nvml.GpuInstancePlacement, p *nvml.GpuInstancePlacement) bool {
	for _, q := range ps {
		if q == *p {
			return true
		}
	}
	return false
}

// gpuTotals are the GPU's compute slices and OFA engines: the most any one profile has
// (the whole-GPU profile's compute; the media profile's engines).
func gpuTotals(profiles map[int]nvml.GpuInstanceProfileInfo) (compute, ofa uint32) {
	for _, p := range profiles {
		compute, ofa = max(compute, p.SliceCount), max(ofa, p.OfaCount)
	}
	return compute, ofa
}

// guardDestroy makes a GPU instance refuse to go while it has compute instances.
func guardDestroy(gi *server.GpuInstance) {
	destroy := gi.DestroyFunc
	gi.DestroyFunc = func() nvml.Return {
		gi.RLock()
		n := len(gi.ComputeInstances)
		gi.RUnlock()
		if n > 0 {
			return nvml.ERROR_IN_USE
		}
		return destroy()
	}
}

// OfferProfile makes GPU i offer GPU-instance profile id (one the mock's GPU lacks, such
// as the GFX, NO_ME and ALL_ME ones) at the given placements, with one compute-instance
// profile spanning it. The go-nvml profile tables are shared by every mock GPU, so the
// GPU gets copies.
func (s *Server) OfferProfile(i, id int, info nvml.GpuInstanceProfileInfo, placements []nvml.GpuInstancePlacement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.gpuAt(i).dev
	cfg := &d.Config.MIGProfiles
	info.Id = uint32(id)
	gis := maps.Clone(cfg.GpuInstanceProfiles)
	gis[id] = info
	places := maps.Clone(cfg.GpuInstancePlacements)
	places[id] = slices.Clone(placements)
	cis := maps.Clone(cfg.ComputeInstanceProfiles)
	ci := computeProfileFor(info.SliceCount)
	cis[id] = map[int]nvml.ComputeInstanceProfileInfo{ci: {Id: uint32(ci), SliceCount: info.SliceCount,
		InstanceCount: 1, MultiprocessorCount: info.MultiprocessorCount}}
	cfg.GpuInstanceProfiles, cfg.GpuInstancePlacements, cfg.ComputeInstanceProfiles = gis, places, cis
}

// computeProfileFor is the compute-instance profile of a number of compute slices.
func computeProfileFor(slices uint32) int {
	byCount := map[uint32]int{1: nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 2: nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE,
		3: nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE, 4: nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE,
		6: nvml.COMPUTE_INSTANCE_PROFILE_6_SLICE, 7: nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE,
		8: nvml.COMPUTE_INSTANCE_PROFILE_8_SLICE}
	return byCount[slices]
}
