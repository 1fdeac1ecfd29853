package engine

import (
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Once the last reservation slot of a cycle is taken, the holds are fixed for the rest
// of the cycle. A slot seeker whose whole-GPU pods the free GPUs, less those held
// against it, cannot host cannot be placed (the condition is necessary), and no slot is
// left to give it: its visit could only end in a rejection. So from then on a slot
// seeker is visited only when the condition lets it through at its turn
// (reserve_seekers.go).

// seekerNarrower returns the test that narrows the slot seekers, over the overlay and
// holds as they are when it is called. Views are shared by seekers with the same holds
// until the cycle admits a workload.
func (c *cycle) seekerNarrower() func(Pending) bool {
	views := map[uint64]*freeGPUView{}
	held := map[uint64]resources.MilliGPU{}
	version := c.quotaVersion
	return func(p Pending) bool {
		needs := p.wholeGPUNeeds()
		mask, small := c.holdMaskFor(p)
		if needs == nil || !small {
			return true
		}
		if version != c.quotaVersion {
			clear(views)
			clear(held)
			version = c.quotaVersion
		}
		v, ok := views[mask]
		if !ok {
			v, held[mask] = c.heldView(mask)
			views[mask] = v
		}
		return p.gpuMilli() <= c.freeGPU-held[mask] && v.mayFit(needs)
	}
}

// heldView is the whole-GPU view of the overlay less the free whole GPUs that the held
// reservations of mask take, and their total in milli-GPU. A GPU held by two of them
// counts once; devices that are not whole GPUs, or on nodes not counted by whole GPUs,
// are left in (the view may only overstate what is free).
func (c *cycle) heldView(mask uint64) (*freeGPUView, resources.MilliGPU) {
	v := newOverlayGPUView(c.ov, &c.e.gpuScratch)
	v.held = map[int]int64{}
	seen := map[[2]int]bool{}
	var milli resources.MilliGPU
	for i := range c.holds {
		if mask&(1<<uint(i)) == 0 {
			continue
		}
		for _, h := range c.holds[i] {
			if c.heldFree(h, seen) {
				v.held[h.node]++
				milli += resources.MilliPerGPU
			}
		}
	}
	return v, milli
}

// heldFree reports whether h holds a whole GPU that is free now and not counted yet.
func (c *cycle) heldFree(h heldDevice, seen map[[2]int]bool) bool {
	d := h.one.Devices[0]
	key := [2]int{h.node, d.GPU}
	if d.Kind != devices.WholeGPU || seen[key] {
		return false
	}
	if _, whole := c.ov.WholeGPUsFree(h.node); !whole {
		return false
	}
	pos, ok := c.ov.GPUPosition(h.node, d.GPU)
	if !ok || c.ov.GPUFreeMilli(h.node)[pos] < resources.MilliPerGPU {
		return false
	}
	seen[key] = true
	return true
}

// heldPods is how many fewer pods of g whole GPUs the nodes host once the held GPUs
// are taken out (0 without holds).
func (v *freeGPUView) heldPods(g int64) int64 {
	var d int64
	for n, h := range v.held {
		f, _ := v.ov.WholeGPUsFree(n)
		d += f/g - (f-h)/g
	}
	return d
}
