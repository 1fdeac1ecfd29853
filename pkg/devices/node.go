package devices

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// NodeDevices is the GPU accounting of one node: what each GPU offers and what is held.
// It is plain data with no I/O; Clone gives an independent copy for what-if work.
type NodeDevices struct {
	gpus []gpuState
	// freeMilli is each GPU's free share in the common unit, kept current by Commit,
	// Release and SetHealthy, so readers get it without recomputing (FreeMilliView).
	freeMilli []resources.MilliGPU
}

// gpuState is one GPU with its model and what is held on it. What never changes after
// the node is built sits in gpuStatic, shared by every clone: a clone copies only the
// usage, and the collector has half the pointers to follow in each GPU.
type gpuState struct {
	*gpuStatic
	healthy     bool
	wholeUsed   bool
	instUsed    []bool  // per units entry
	replicaUsed []bool  // per replica
	shares      []share // fractional shares held
	usedMilli   resources.MilliGPU
	usedMemory  resources.MiB
	// carved is a dynamic GPU's carved instances, a bit set over space.placements
	// (dynamic.go).
	carved uint64
}

// gpuStatic is what a GPU is, fixed when its node is built (read-only afterwards).
type gpuStatic struct {
	// spec is the GPU as configured (gpu, held here so the node's GPUs are one
	// allocation); its Healthy is the value at build time: gpuState.healthy is current.
	spec *GPU
	gpu  GPU
	// model is resolved once when the node is built and shared by every GPU of that
	// model on the node (looking it up costs a catalog build).
	model *Model
	// sharing is the GPU's own sharing: spec.Sharing, or for a GPU of a per-resource
	// config what the entry selecting it (or none) makes of it.
	sharing *Sharing
	// units are what a MIG GPU hands out: instances and time-sliced replicas.
	units []migUnit
	kind  unitKind
	// space is a dynamic GPU's geometry.
	space *migSpace
}

// share is one fractional holding on a GPU.
type share struct {
	milli  resources.MilliGPU
	memory resources.MiB
}

// NewNodeDevices validates the GPUs of a node and returns their accounting with nothing
// held. GPUs are kept sorted by index; indices must be unique and non-negative, models
// known, sharing valid for the model, MIG layouts valid, and every MIG GPU on the node must
// use one strategy (one profile under single), as the device plugin requires.
func NewNodeDevices(gpus []GPU) (*NodeDevices, error) { return NewNodeDevicesWith(nil, gpus) }

// NewNodeDevicesWith is NewNodeDevices with the models already looked up: a GPU whose
// Model is one of their IDs uses that model without a catalog look-up (builders of many
// nodes, such as node pools, look the model up once). The models are kept, shared and
// read-only, so the caller must not change them (their MIG geometry) afterwards.
func NewNodeDevicesWith(models []Model, gpus []GPU) (*NodeDevices, error) {
	known := make([]namedModel, len(models))
	for k := range models {
		known[k] = namedModel{name: models[k].ID, model: &models[k]}
	}
	sorted := append([]GPU(nil), gpus...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Index < sorted[j].Index })
	n := &NodeDevices{gpus: make([]gpuState, len(sorted)), freeMilli: make([]resources.MilliGPU, len(sorted))}
	var pos sharingPositions
	statics := make([]gpuStatic, len(sorted)) // one allocation for the node's GPUs
	for i, g := range sorted {
		st, err := newGPUState(g, &statics[i], &known, &pos) // one look-up per distinct model name at most
		if err != nil {
			return nil, err
		}
		if i > 0 && sorted[i-1].Index == g.Index {
			return nil, fmt.Errorf("GPU-%d: index appears twice", g.Index)
		}
		n.gpus[i] = st
		n.freeMilli[i] = st.freeMilliNow()
	}
	if err := n.checkMIGStrategy(); err != nil {
		return nil, err
	}
	return n, nil
}

// modelFor returns the model named by a GPU: from models when the caller passed it in or
// an earlier GPU of the node named it the same way, else from the catalog (remembered).
func modelFor(g GPU, models *[]namedModel) (*Model, error) {
	for _, nm := range *models {
		if nm.name == g.Model {
			return nm.model, nil
		}
	}
	m, err := sharedModel(string(g.Model))
	if err != nil {
		return nil, err
	}
	*models = append(*models, namedModel{name: g.Model, model: m})
	return m, nil
}

// namedModel is a model and the name a GPU gave for it.
type namedModel struct {
	name  ModelID
	model *Model
}

// sharingPositions numbers the node's devices as NVIDIA's per-resource selections
// ("devices: <count>") count them: GPUs without MIG instances, and the MIG devices of
// each resource.
type sharingPositions struct {
	whole int
	mig   migPositions
}

// newGPUState builds GPU g's state, filling static as its fixed part.
func newGPUState(g GPU, static *gpuStatic, models *[]namedModel, pos *sharingPositions) (gpuState, error) {
	if g.Index < 0 {
		return gpuState{}, fmt.Errorf("GPU-%d: index is negative", g.Index)
	}
	m, err := modelFor(g, models)
	if err != nil {
		return gpuState{}, fmt.Errorf("GPU-%d: model: %w", g.Index, err)
	}
	if err := ValidateSharing(*m, g.Sharing); err != nil {
		return gpuState{}, fmt.Errorf("GPU-%d: %w", g.Index, err)
	}
	if len(g.Instances) > 0 && g.Sharing.EffectiveMode() != MIG {
		return gpuState{}, fmt.Errorf("GPU-%d: has MIG instances but sharing mode is %s", g.Index, g.Sharing.EffectiveMode())
	}
	if err := m.ValidateLayout(g.Instances); err != nil {
		return gpuState{}, fmt.Errorf("GPU-%d: instances: %w", g.Index, err)
	}
	*static = gpuStatic{gpu: g, model: m}
	spec := &static.gpu // kept inside static: no allocation of its own
	spec.Instances = append([]Instance(nil), g.Instances...)
	static.spec, static.sharing = spec, gpuSharing(spec, pos)
	st := gpuState{gpuStatic: static, healthy: g.Healthy}
	st.kind = kindOf(len(spec.Instances), *st.sharing)
	switch st.kind {
	case unitMIG:
		st.units = newMIGUnits(spec, m, st.sharing, &pos.mig)
		st.instUsed = make([]bool, len(st.units))
	case unitReplica:
		st.replicaUsed = make([]bool, st.sharing.Replicas)
	case unitDynamic:
		if err := st.newDynamicState(spec); err != nil {
			return gpuState{}, err
		}
	}
	return st, nil
}

// gpuSharing is how GPU g is shared, as the node agent shares it: a GPU without MIG
// instances under a per-resource config gets the entry selecting it (by index, UUID or
// position among such GPUs) or none (Sharing.ForGPU); any other GPU its configured
// sharing (its MIG devices are selected in newMIGUnits).
func gpuSharing(g *GPU, pos *sharingPositions) *Sharing {
	if len(g.Instances) > 0 || g.Sharing.EffectiveMode() == MIG {
		return &g.Sharing
	}
	pos.whole++
	if len(g.Sharing.Resources) == 0 || !g.Sharing.Replicates() {
		return &g.Sharing
	}
	s := g.Sharing.ForGPU(DeviceRef{Position: pos.whole - 1, Index: strconv.Itoa(g.Index), UUID: g.UUID})
	return &s
}

// checkMIGStrategy enforces one MIG strategy per node and one profile under single.
func (n *NodeDevices) checkMIGStrategy() error {
	strategy, profile := MIGStrategy(""), ""
	for _, g := range n.gpus {
		if g.kind != unitMIG {
			continue
		}
		s := g.spec.Sharing.EffectiveMIGStrategy()
		if strategy != "" && s != strategy {
			return fmt.Errorf("GPU-%d: MIG strategy %s differs from %s on other GPUs of the node", g.spec.Index, s, strategy)
		}
		strategy = s
		if s != MIGSingle {
			continue
		}
		for _, in := range g.spec.Instances {
			if profile != "" && in.Profile != profile {
				return fmt.Errorf("GPU-%d: MIG strategy single needs one profile on the node, found %s and %s", g.spec.Index, profile, in.Profile)
			}
			profile = in.Profile
		}
	}
	return nil
}

// NumGPUs is len(GPUs()) without the copies.
func (n *NodeDevices) NumGPUs() int { return len(n.gpus) }

// FirstGPU is the model and sharing mode of GPUs()[0] without the copies; ok is false
// on a node without GPUs.
func (n *NodeDevices) FirstGPU() (model ModelID, mode SharingMode, ok bool) {
	if len(n.gpus) == 0 {
		return "", "", false
	}
	s := n.gpus[0].spec
	return s.Model, s.Sharing.Mode, true
}

// GPUAt is the model, sharing mode and health of GPUs()[k] without the copies (a
// metrics walk over every GPU of a fleet reads only these).
func (n *NodeDevices) GPUAt(k int) (model ModelID, mode SharingMode, healthy bool) {
	g := &n.gpus[k]
	return g.spec.Model, g.spec.Sharing.Mode, g.healthy
}

// GPUs returns the node's GPUs (copies), sorted by index.
func (n *NodeDevices) GPUs() []GPU {
	out := make([]GPU, len(n.gpus))
	for i, g := range n.gpus {
		out[i] = *g.spec
		out[i].Healthy = g.healthy
		out[i].Instances = append([]Instance(nil), g.spec.Instances...)
	}
	return out
}

// smallNode is a clone of a node of up to eight GPUs in one allocation: overlays
// clone thousands of nodes a cycle, and three objects each were that much more for the
// allocator and the collector.
type smallNode struct {
	nd   NodeDevices
	gpus [8]gpuState
	free [8]resources.MilliGPU
}

// Clone returns an independent copy; only the small per-GPU usage slices are copied.
func (n *NodeDevices) Clone() *NodeDevices {
	var c *NodeDevices
	if k := len(n.gpus); k > 0 && k <= len(smallNode{}.gpus) {
		b := new(smallNode)
		c = &b.nd
		c.gpus, c.freeMilli = b.gpus[:k:k], b.free[:k:k] // capped: nothing grows into the rest
		copy(c.freeMilli, n.freeMilli)
	} else {
		c = &NodeDevices{gpus: make([]gpuState, len(n.gpus)), freeMilli: slices.Clone(n.freeMilli)}
	}
	total := 0
	for i := range n.gpus {
		total += len(n.gpus[i].instUsed) + len(n.gpus[i].replicaUsed)
	}
	// One backing array for every GPU's usage flags: snapshots clone thousands of nodes.
	// The flags never grow, and each slice is capped so none can reach its neighbour.
	flags := make([]bool, 0, total)
	carve := func(src []bool) []bool {
		if src == nil {
			return nil
		}
		at := len(flags)
		flags = append(flags, src...)
		return flags[at:len(flags):len(flags)]
	}
	for i := range n.gpus {
		g := n.gpus[i]
		g.instUsed = carve(g.instUsed)
		g.replicaUsed = carve(g.replicaUsed)
		g.shares = slices.Clone(g.shares)
		c.gpus[i] = g
	}
	return c
}

// CopyFrom makes n what src.Clone() would return, in n's own memory: an overlay that
// writes a node again after restoring it copies the base's accounting into the buffers
// it already has. It reports false, changing nothing, when n's shape differs from
// src's (another node's GPUs: clone instead).
func (n *NodeDevices) CopyFrom(src *NodeDevices) bool {
	if len(n.gpus) != len(src.gpus) {
		return false
	}
	for i := range src.gpus {
		d, s := &n.gpus[i], &src.gpus[i]
		if d.gpuStatic != s.gpuStatic || len(d.instUsed) != len(s.instUsed) || len(d.replicaUsed) != len(s.replicaUsed) {
			return false
		}
	}
	for i := range src.gpus {
		d, s := &n.gpus[i], &src.gpus[i]
		inst, replicas, shares := d.instUsed, d.replicaUsed, d.shares
		*d = *s
		d.instUsed, d.replicaUsed = inst, replicas // n's own flags, as long as src's
		copy(d.instUsed, s.instUsed)
		copy(d.replicaUsed, s.replicaUsed)
		d.shares = nil
		if len(s.shares) > 0 {
			d.shares = append(shares[:0], s.shares...)
		}
	}
	copy(n.freeMilli, src.freeMilli)
	return true
}

func (g gpuState) clone() gpuState {
	g.instUsed = append([]bool(nil), g.instUsed...)
	g.replicaUsed = append([]bool(nil), g.replicaUsed...)
	g.shares = append([]share(nil), g.shares...)
	return g
}

// SetHealthy marks a GPU healthy or not. An unhealthy GPU offers nothing; what is held
// on it stays held until released.
func (n *NodeDevices) SetHealthy(index int, ok bool) error {
	i, found := n.find(index)
	if !found {
		return fmt.Errorf("GPU-%d: no such GPU on the node", index)
	}
	n.gpus[i].healthy = ok
	n.freeMilli[i] = n.gpus[i].freeMilliNow()
	return nil
}

// find returns the position of GPU index in n.gpus.
func (n *NodeDevices) find(index int) (int, bool) {
	i := sort.Search(len(n.gpus), func(i int) bool { return n.gpus[i].spec.Index >= index })
	return i, i < len(n.gpus) && n.gpus[i].spec.Index == index
}

// Capacity is what the device plugin would advertise for the healthy GPUs (nvidia.com/gpu,
// nvidia.com/gpu.shared, nvidia.com/mig-<profile>) plus Gantry's gantry.dev/gpu-milli and
// gantry.dev/gpu-memory.
func (n *NodeDevices) Capacity() resources.Vector { return n.offer(false) }

// Free is the part of Capacity that is not held.
func (n *NodeDevices) Free() resources.Vector { return n.offer(true) }

func (n *NodeDevices) offer(freeOnly bool) resources.Vector {
	v := resources.Vector{}
	for i := range n.gpus {
		if n.gpus[i].healthy {
			n.gpus[i].addOffer(v, freeOnly)
		}
	}
	return v
}

// addOffer adds what one GPU offers (all of it, or only its free part) to v.
func (g *gpuState) addOffer(v resources.Vector, freeOnly bool) {
	add := func(name resources.Name, a int64) { v[name] = resources.SatAdd(v[name], resources.Amount(a)) }
	s := g.sharing
	switch g.kind {
	case unitWhole:
		if !freeOnly || !g.wholeUsed {
			add(resources.NvidiaGPU, 1)
			add(resources.GPUMilli, int64(resources.MilliPerGPU))
			add(resources.GPUMemory, int64(g.model.Memory))
		}
	case unitMIG:
		for k := range g.units {
			if freeOnly && g.instUsed[k] {
				continue
			}
			add(g.units[k].name, 1)
			add(resources.GPUMilli, int64(g.units[k].milli))
			add(resources.GPUMemory, int64(g.units[k].memory))
		}
	case unitReplica:
		for _, used := range g.replicaUsed {
			if freeOnly && used {
				continue
			}
			add(replicaResource(*s), 1)
			add(resources.GPUMilli, int64(replicaMilli(s.Replicas)))
			add(resources.GPUMemory, int64(s.ReplicaMemory(*g.model)))
		}
	case unitShare:
		if !freeOnly {
			add(resources.NvidiaGPU, 1)
			add(resources.GPUMilli, int64(resources.MilliPerGPU))
			add(resources.GPUMemory, int64(g.model.Memory))
			return
		}
		if g.entirelyFree() {
			add(resources.NvidiaGPU, 1)
		}
		if !g.wholeUsed {
			add(resources.GPUMilli, int64(resources.MilliPerGPU-g.usedMilli))
			add(resources.GPUMemory, int64(g.model.Memory-g.usedMemory))
		}
	case unitDynamic:
		g.addDynamicOffer(add, freeOnly)
	}
}

// entirelyFree reports whether a fractional or dynamic GPU holds nothing, so it can go
// whole.
func (g *gpuState) entirelyFree() bool { return !g.wholeUsed && len(g.shares) == 0 && g.carved == 0 }

// FreeMilliByGPU is each GPU's free share in the common unit, in GPUs() order, by the
// same rules as Free (0 for an unhealthy GPU), for scorers that look at fragmentation.
// It returns a copy; FreeMilliView is the same without one.
func (n *NodeDevices) FreeMilliByGPU() []resources.MilliGPU { return slices.Clone(n.freeMilli) }

// FreeMilliView is FreeMilliByGPU without a copy, for hot paths: the slice is read-only
// and changes with the node (Commit, Release, SetHealthy); callers must not write it.
func (n *NodeDevices) FreeMilliView() []resources.MilliGPU { return n.freeMilli }

// freeMilliNow is what the GPU has free in the common unit, by the rules of Free: a
// whole GPU 1000 or 0, a MIG GPU its free instances' shares, a time-sliced or MPS GPU
// its free replicas × ⌊1000/replicas⌋, a fractional GPU what its shares leave, a
// dynamic GPU what its carved instances leave.
func (g *gpuState) freeMilliNow() resources.MilliGPU {
	if !g.healthy {
		return 0
	}
	switch g.kind {
	case unitMIG:
		var sum resources.MilliGPU
		for k, used := range g.instUsed {
			if !used {
				sum += g.units[k].milli
			}
		}
		return sum
	case unitReplica:
		return resources.MilliGPU(g.freeReplicaCount()) * replicaMilli(g.sharing.Replicas)
	case unitShare:
		if g.wholeUsed {
			return 0
		}
		return resources.MilliPerGPU - g.usedMilli
	case unitDynamic:
		return g.dynamicFreeMilli()
	}
	if g.wholeUsed {
		return 0
	}
	return resources.MilliPerGPU
}
