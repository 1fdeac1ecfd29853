package mock

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
)

// GpuInstance is a live MIG GPU instance of the mock.
type GpuInstance struct {
	dev       *Device
	id        uint32
	profile   a100Profile
	placement nvml.GpuInstancePlacement
	cis       map[uint32]*ComputeInstance
	destroyed bool
}

// ComputeInstance is a live compute instance.
type ComputeInstance struct {
	gi        *GpuInstance
	id        uint32
	profile   int
	slices    uint32
	destroyed bool
}

var (
	_ nvml.GpuInstance     = (*GpuInstance)(nil)
	_ nvml.ComputeInstance = (*ComputeInstance)(nil)
)

// CreateGpuInstanceWithPlacement places a GPU instance the way the A100 does: MIG mode
// must be on; the placement must be one of the profile's (start slot and size); its
// memory slices must be free; the GPU's compute slices, the profile's instance count and
// the media engines (one JPEG/OFA, five decoders) must not run out.
func (d *Device) CreateGpuInstanceWithPlacement(info *nvml.GpuInstanceProfileInfo, pl *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
	defer d.lock()()
	if info == nil || pl == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	if d.migCurrent != nvml.DEVICE_MIG_ENABLE {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	p, ok := findProfile(int(info.ID))
	if !ok {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	if pl.Size != p.size || !p.allowsStart(pl.Start) {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	if r := d.checkCapacity(p, *pl); r != nvml.SUCCESS {
		return nil, r
	}
	gi := &GpuInstance{dev: d, id: d.freeGIID(), profile: p, placement: *pl, cis: map[uint32]*ComputeInstance{}}
	d.gis[gi.id] = gi
	return gi, nvml.SUCCESS
}

// checkCapacity says whether p fits at pl next to the live instances.
func (d *Device) checkCapacity(p a100Profile, pl nvml.GpuInstancePlacement) nvml.Return {
	var used [a100MemorySlices]bool
	compute, count := p.compute, uint32(1)
	decoders, jpegs, ofas := p.decoders, p.jpegs, p.ofas
	for _, gi := range d.gis {
		for s := gi.placement.Start; s < gi.placement.Start+gi.placement.Size; s++ {
			used[s] = true
		}
		compute += gi.profile.compute
		decoders += gi.profile.decoders
		jpegs += gi.profile.jpegs
		ofas += gi.profile.ofas
		if gi.profile.id == p.id {
			count++
		}
	}
	for s := pl.Start; s < pl.Start+pl.Size; s++ {
		if s >= a100MemorySlices || used[s] {
			return nvml.ERROR_INSUFFICIENT_RES
		}
	}
	if compute > a100ComputeSlices || count > p.count || decoders > a100Decoders || jpegs > a100Jpegs || ofas > a100Ofas {
		return nvml.ERROR_INSUFFICIENT_RES
	}
	return nvml.SUCCESS
}

// freeGIID is the lowest unused GPU-instance ID, from 1.
func (d *Device) freeGIID() uint32 {
	for id := uint32(1); ; id++ {
		if _, taken := d.gis[id]; !taken {
			return id
		}
	}
}

func (d *Device) sortedGIs() []*GpuInstance {
	out := make([]*GpuInstance, 0, len(d.gis))
	for _, gi := range d.gis {
		out = append(out, gi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// GetInfo identifies the instance.
func (g *GpuInstance) GetInfo() (nvml.GpuInstanceInfo, nvml.Return) {
	defer g.dev.lock()()
	if g.destroyed {
		return nvml.GpuInstanceInfo{}, nvml.ERROR_NOT_FOUND
	}
	return nvml.GpuInstanceInfo{ID: g.id, ProfileID: uint32(g.profile.id), Placement: g.placement}, nvml.SUCCESS
}

// Destroy removes the instance; ERROR_IN_USE while compute instances live in it.
func (g *GpuInstance) Destroy() nvml.Return {
	defer g.dev.lock()()
	if g.destroyed {
		return nvml.ERROR_NOT_FOUND
	}
	if len(g.cis) > 0 {
		return nvml.ERROR_IN_USE
	}
	g.destroyed = true
	delete(g.dev.gis, g.id)
	return nvml.SUCCESS
}

// GetComputeInstanceProfileInfo describes a compute profile no bigger than the GI.
func (g *GpuInstance) GetComputeInstanceProfileInfo(profile, eng int) (nvml.ComputeInstanceProfileInfo, nvml.Return) {
	slices, ok := computeSlicesOf(profile)
	if !ok || eng != nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED || slices > g.profile.compute {
		return nvml.ComputeInstanceProfileInfo{}, nvml.ERROR_NOT_SUPPORTED
	}
	return nvml.ComputeInstanceProfileInfo{
		ID: uint32(profile), SliceCount: slices, InstanceCount: g.profile.compute / slices,
		MultiprocessorCount: g.profile.sms / g.profile.compute * slices,
	}, nvml.SUCCESS
}

// CreateComputeInstance adds a compute instance while the GI has compute slices left.
func (g *GpuInstance) CreateComputeInstance(info *nvml.ComputeInstanceProfileInfo) (nvml.ComputeInstance, nvml.Return) {
	defer g.dev.lock()()
	if info == nil || g.destroyed {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	slices, ok := computeSlicesOf(int(info.ID))
	if !ok {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	used := slices
	for _, ci := range g.cis {
		used += ci.slices
	}
	if used > g.profile.compute {
		return nil, nvml.ERROR_INSUFFICIENT_RES
	}
	id := uint32(0)
	for ; ; id++ {
		if _, taken := g.cis[id]; !taken {
			break
		}
	}
	ci := &ComputeInstance{gi: g, id: id, profile: int(info.ID), slices: slices}
	g.cis[id] = ci
	return ci, nvml.SUCCESS
}

// GetComputeInstances lists the live compute instances of a profile.
func (g *GpuInstance) GetComputeInstances(info *nvml.ComputeInstanceProfileInfo) ([]nvml.ComputeInstance, nvml.Return) {
	defer g.dev.lock()()
	if info == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	var out []nvml.ComputeInstance
	for _, ci := range g.sortedCIs() {
		if ci.profile == int(info.ID) {
			out = append(out, ci)
		}
	}
	return out, nvml.SUCCESS
}

func (g *GpuInstance) sortedCIs() []*ComputeInstance {
	out := make([]*ComputeInstance, 0, len(g.cis))
	for _, ci := range g.cis {
		out = append(out, ci)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// GetInfo identifies the compute instance.
func (c *ComputeInstance) GetInfo() (nvml.ComputeInstanceInfo, nvml.Return) {
	defer c.gi.dev.lock()()
	if c.destroyed {
		return nvml.ComputeInstanceInfo{}, nvml.ERROR_NOT_FOUND
	}
	return nvml.ComputeInstanceInfo{ID: c.id, ProfileID: uint32(c.profile), GpuInstanceID: c.gi.id}, nvml.SUCCESS
}

// Destroy removes the compute instance.
func (c *ComputeInstance) Destroy() nvml.Return {
	defer c.gi.dev.lock()()
	if c.destroyed {
		return nvml.ERROR_NOT_FOUND
	}
	c.destroyed = true
	delete(c.gi.cis, c.id)
	return nvml.SUCCESS
}
