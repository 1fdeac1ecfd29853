package devices

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// LayoutDynamic is the MIG layout chosen at allocation time (KEP-4815 partitionable
// devices, NVIDIA's dynamic MIG): the GPU is in MIG mode with no instance until a DRA
// claim is allocated one, and the instance goes when the claim does. Whatever the
// pending claims ask for (3g + 2g + 2g on one A100, 4g + 3g on another) is carved where
// the hardware's placement rules allow it. Only DRA claims (a Request with a Filter)
// use such a GPU: the device plugin advertises a fixed layout, so extended resources
// (nvidia.com/gpu, nvidia.com/mig-*) never get it.
const LayoutDynamic = "all-dynamic"

// DynamicMIG reports whether s leaves the GPU's MIG layout to allocation time.
func (s Sharing) DynamicMIG() bool {
	return s.EffectiveMode() == MIG && strings.EqualFold(strings.TrimSpace(s.Layout), LayoutDynamic)
}

// The ways carving fails beyond the placement rules.
var (
	errCarveReplica = errors.New("MIG replicas need a fixed layout: a dynamic GPU carves whole instances")
	errNotCarved    = errors.New("MIG instance is not carved")
	errCarvedBusy   = errors.New("GPU has MIG instances carved: it is not offered whole until they go")
)

// newDynamicState fills in what a dynamic GPU needs: its geometry's space. A dynamic GPU
// lists no instances of its own: they are carved as claims are allocated (and never
// time-sliced: ValidateSharing refuses sharing.resources with this layout).
func (st *gpuState) newDynamicState(g *GPU) error {
	if len(g.Instances) > 0 {
		return fmt.Errorf("GPU-%d: layout %s carves instances at allocation time, but the GPU lists %d (%v)", g.Index, LayoutDynamic, len(g.Instances), g.Instances)
	}
	s, err := spaceFor(st.model)
	if err != nil {
		return fmt.Errorf("GPU-%d: %w", g.Index, err)
	}
	st.space = s
	return nil
}

// carvedMilli and carvedMemory are what the carved instances hold.
func (g *gpuState) carvedMilli() (resources.MilliGPU, resources.MiB) {
	var milli resources.MilliGPU
	var mem resources.MiB
	for l := g.carved; l != 0; l &= l - 1 {
		pl := &g.space.placements[bits.TrailingZeros64(l)]
		milli += pl.milli
		mem += pl.memory
	}
	return milli, mem
}

// dynamicFreeMilli is a dynamic GPU's free share: all of it, less what is carved, none
// when it is held whole. The carved instances' shares are rounded down (3g = 428m), so
// a GPU carved full still shows a few milli free; quota and fair share count the same.
func (g *gpuState) dynamicFreeMilli() resources.MilliGPU {
	if g.wholeUsed {
		return 0
	}
	milli, _ := g.carvedMilli()
	return resources.MilliPerGPU - milli
}

// addDynamicOffer adds what a dynamic GPU offers to v: gpu-milli and gpu-memory, and
// under each nvidia.com/mig-<profile> how many instances of that profile alone could
// be carved (alternatives: they do not add up). No device plugin advertises them and
// Fit gives them to DRA claims only; they are there so that the free index and the
// capacity checks that read device-plugin names find the node for a claim. Its whole
// GPU is counted by its free gpu-milli, as on exclusive nodes.
func (g *gpuState) addDynamicOffer(add func(resources.Name, int64), freeOnly bool) {
	layout := uint64(0)
	if freeOnly {
		if g.wholeUsed {
			return
		}
		layout = g.carved
	}
	milli, mem := g.carvedMilli()
	if !freeOnly {
		milli, mem = 0, 0
	}
	add(resources.GPUMilli, int64(resources.MilliPerGPU-milli))
	add(resources.GPUMemory, int64(g.model.Memory-mem))
	for k, n := range g.space.room(layout) {
		if n > 0 {
			add(resources.MIGResource(g.model.MIG.Profiles[k].Name), int64(n))
		}
	}
}

// carve holds MIG instance d on a dynamic GPU: it must not be held whole, and the
// instance must make a valid layout with those carved already (ValidateLayout's rules).
func (g *gpuState) carve(d Device) error {
	if d.Kind != MIGDevice {
		return errCarveReplica
	}
	if g.wholeUsed {
		return errHeldWhole
	}
	i, ok := g.space.index(g.model, d.Instance)
	if !ok {
		return fmt.Errorf("%s has no MIG placement %s", g.model.ID, d.Instance)
	}
	if g.carved&(1<<i) != 0 {
		return errInstanceInUse
	}
	layout := g.carved | 1<<i
	if err := g.model.ValidateLayout(g.space.instances(layout)); err != nil {
		return fmt.Errorf("cannot carve %s beside %v: %w", d.Instance, g.space.instances(g.carved), err)
	}
	g.carved = layout
	return nil
}

// uncarve releases MIG instance d of a dynamic GPU: the instance goes.
func (g *gpuState) uncarve(d Device) error {
	if d.Kind != MIGDevice {
		return errCarveReplica
	}
	i, ok := g.space.index(g.model, d.Instance)
	if !ok || g.carved&(1<<i) == 0 {
		return errNotCarved
	}
	g.carved &^= 1 << i
	return nil
}

// placementDevice is the device of placement i of a dynamic GPU.
func (g *gpuState) placementDevice(i int) Device {
	pl := &g.space.placements[i]
	return Device{GPU: g.spec.Index, Kind: MIGDevice, Instance: pl.inst, Milli: pl.milli, Memory: pl.memory}
}

// Carved lists the MIG instances carved on GPU index, by profile and start; nil for a
// GPU without a dynamic layout or with nothing carved.
func (n *NodeDevices) Carved(index int) []Instance {
	pos, ok := n.find(index)
	if !ok || n.gpus[pos].kind != unitDynamic || n.gpus[pos].carved == 0 {
		return nil
	}
	g := &n.gpus[pos]
	return g.space.instances(g.carved)
}

// DynamicGPUs lists the indices of the node's GPUs with a dynamic MIG layout.
func (n *NodeDevices) DynamicGPUs() []int {
	var out []int
	for i := range n.gpus {
		if n.gpus[i].kind == unitDynamic {
			out = append(out, n.gpus[i].spec.Index)
		}
	}
	return out
}

// Placements lists every MIG instance a GPU of model m can be carved into under a
// dynamic layout: each profile at each start slot its rule allows, by profile (the
// catalog's order) and start. None without MIG. pkg/dra publishes one partitionable
// device per placement.
func (m Model) Placements() []Instance {
	if m.MIG == nil {
		return nil
	}
	var out []Instance
	for _, p := range m.MIG.Profiles {
		for _, start := range p.Starts {
			if inGeometry(m.MIG, p, start) {
				out = append(out, Instance{Profile: p.Name, Start: start})
			}
		}
	}
	return out
}
