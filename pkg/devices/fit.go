package devices

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// Fit picks concrete devices on the node for one pod's request, without changing the
// node: whole GPUs prefer one NVLink domain, then one PCIe switch, then low indices;
// MIG instances, replicas and shares go to the fullest GPU that still has room (best
// fit), so whole GPUs stay free. A request that does not fit returns a Refusal naming
// the short resource and the numbers.
func (n *NodeDevices) Fit(r Request) (Assignment, *Refusal) {
	if r.IsZero() {
		return Assignment{}, nil
	}
	if ref := r.kindRefusal(); ref != nil {
		return Assignment{}, ref
	}
	if r.Filter != nil {
		if ref := r.filterKindRefusal(); ref != nil {
			return Assignment{}, ref
		}
		return n.fitFiltered(r)
	}
	var a Assignment
	var ref *Refusal
	switch {
	case r.IsFraction():
		a, ref = n.fitShare(r)
	case r.Units > 0:
		a, ref = n.fitUnits(r)
	case r.Shared > 0:
		a, ref = n.fitReplicas(r, resources.NvidiaGPUShared, r.Shared)
	default:
		a, ref = n.fitMIG(r)
	}
	if ref != nil {
		ref.Reason += n.dynamicNote(r)
	}
	return a, ref
}

// kindRefusal refuses a hand-built request that mixes kinds (ParseRequest never does).
func (r Request) kindRefusal() *Refusal {
	kinds := 0
	for _, set := range []bool{r.Units > 0, r.Shared > 0, len(r.MIG) > 0, r.IsFraction()} {
		if set {
			kinds++
		}
	}
	if kinds > 1 || r.Units < 0 || r.Shared < 0 || r.Milli < 0 || r.Memory < 0 || r.Milli >= resources.MilliPerGPU {
		return &Refusal{Resource: resources.NvidiaGPU, Reason: fmt.Sprintf("malformed request %s: one kind of GPU resource, non-negative, shares below 1000m", r)}
	}
	return nil
}

// eligible reports whether GPU g may serve r at all: healthy and of an allowed model.
func eligible(g *gpuState, r Request) bool {
	if !g.healthy {
		return false
	}
	if len(r.ModelConstraint) == 0 {
		return true
	}
	for _, id := range r.ModelConstraint {
		if id == g.model.ID {
			return true
		}
	}
	return false
}

// fitUnits serves nvidia.com/gpu from one class of units: whole GPUs, else MIG-single
// instances, else time-sliced/MPS replicas without renameByDefault; when no class holds
// the request alone (a per-resource config replicating some GPUs), every free
// replica and instance and then whole GPUs, as the node advertises them all under the
// one name.
func (n *NodeDevices) fitUnits(r Request) (Assignment, *Refusal) {
	var wbuf, pbuf [scratchGroups]int
	whole := n.freeWhole(r, wbuf[:0])
	if int64(len(whole)) >= r.Units {
		return n.wholeAssignment(pickTopology(n.gpus, whole, int(r.Units), pbuf[:0])), nil
	}
	var ibuf [scratchSlots]slot
	inst := n.freeInstances(r, "", false, MIGSingle, ibuf[:0])
	if int64(len(inst)) >= r.Units {
		return n.slotAssignment(inst[:r.Units]), nil
	}
	units := n.freeReplicas(r, resources.NvidiaGPU, inst) // inst, then the replicas
	reps := units[len(inst):]
	if int64(len(reps)) >= r.Units {
		return n.slotAssignment(reps[:r.Units]), nil
	}
	if rest := int(r.Units) - len(units); len(units) > 0 && rest <= len(whole) {
		a := n.slotAssignment(units)
		a.Devices = append(a.Devices, n.wholeAssignment(pickTopology(n.gpus, whole, rest, pbuf[:0])).Devices...)
		return a, nil
	}
	if len(whole) == 0 && len(units) == 0 {
		if err := n.replicaRule(r, resources.NvidiaGPU); err != nil {
			return Assignment{}, &Refusal{Resource: resources.NvidiaGPU, Reason: err.Error()}
		}
	}
	return Assignment{}, &Refusal{Resource: resources.NvidiaGPU, Reason: fmt.Sprintf(
		"need %d, free: %d whole GPUs, %d MIG instances, %d replicas (%d GPUs healthy of %d)",
		r.Units, len(whole), len(inst), len(reps), n.healthyCount(), len(n.gpus))}
}

// fitReplicas serves nvidia.com/gpu.shared: replicas of whole GPUs, or of MIG devices
// under the single strategy.
func (n *NodeDevices) fitReplicas(r Request, name resources.Name, count int64) (Assignment, *Refusal) {
	var buf [scratchSlots]slot
	reps := n.freeReplicas(r, name, buf[:0])
	reps = n.freeInstances(r, "", true, MIGSingle, reps)
	if int64(len(reps)) < count {
		if err := n.replicaRule(r, name); len(reps) == 0 && err != nil {
			return Assignment{}, &Refusal{Resource: name, Reason: err.Error()}
		}
		return Assignment{}, &Refusal{Resource: name, Reason: fmt.Sprintf("need %d replicas, %d free", count, len(reps))}
	}
	return n.slotAssignment(reps[:count]), nil
}

// fitMIG serves mixed-strategy MIG requests, profile by profile.
func (n *NodeDevices) fitMIG(r Request) (Assignment, *Refusal) {
	var a Assignment
	var buf [scratchSlots]slot
	for _, mc := range r.MIG {
		inst := n.freeInstances(r, mc.Profile, mc.Shared, MIGMixed, buf[:0])
		if int64(len(inst)) < mc.Count {
			name := mc.Resource()
			if err := n.replicaRule(r, name); len(inst) == 0 && err != nil {
				return Assignment{}, &Refusal{Resource: name, Reason: err.Error()}
			}
			return Assignment{}, &Refusal{Resource: name, Reason: fmt.Sprintf(
				"need %d, %d free (%d on the node)", mc.Count, len(inst), n.unitTotal(mc))}
		}
		if len(r.MIG) == 1 {
			return n.slotAssignment(inst[:mc.Count]), nil
		}
		a.Devices = append(a.Devices, n.slotAssignment(inst[:mc.Count]).Devices...)
	}
	return a, nil
}

// fitShare serves a fraction of one GPU on the fullest fractional GPU with room.
func (n *NodeDevices) fitShare(r Request) (Assignment, *Refusal) {
	best, bestFree := -1, resources.MilliGPU(0)
	bestMem := resources.MiB(0)
	var mostFree resources.MilliGPU
	for i := range n.gpus {
		g := &n.gpus[i]
		if !eligible(g, r) || g.kind != unitShare || g.wholeUsed {
			continue
		}
		free, freeMem := resources.MilliPerGPU-g.usedMilli, g.model.Memory-g.usedMemory
		mostFree = max(mostFree, free)
		if !g.shareFits(r) {
			continue
		}
		if best < 0 || free < bestFree || (free == bestFree && freeMem < bestMem) {
			best, bestFree, bestMem = i, free, freeMem
		}
	}
	if best < 0 {
		name := resources.GPUMilli
		if r.Milli == 0 {
			name = resources.GPUMemory
		}
		return Assignment{}, &Refusal{Resource: name, Reason: fmt.Sprintf(
			"no fractional GPU has %dm and %d MiB free (most free compute on one GPU: %dm)", r.Milli, r.Memory, mostFree)}
	}
	return Assignment{Devices: []Device{n.gpus[best].shareDevice(r)}}, nil
}

// shareMilli is the compute a share takes: what it asks, or for a memory-only share
// its memory's part of the GPU, rounded up so shares never oversubscribe compute.
func (g *gpuState) shareMilli(r Request) resources.MilliGPU {
	if r.Milli > 0 || g.model.Memory == 0 {
		return r.Milli
	}
	m := (int64(r.Memory)*int64(resources.MilliPerGPU) + int64(g.model.Memory) - 1) / int64(g.model.Memory)
	return resources.MilliGPU(max(m, 1))
}

func (g *gpuState) shareFits(r Request) bool {
	return g.usedMilli+g.shareMilli(r) <= resources.MilliPerGPU && g.usedMemory+r.Memory <= g.model.Memory
}

func (g *gpuState) shareDevice(r Request) Device {
	return Device{GPU: g.spec.Index, Kind: ShareDevice, Milli: g.shareMilli(r), Memory: r.Memory}
}

func (n *NodeDevices) healthyCount() int {
	c := 0
	for i := range n.gpus {
		if n.gpus[i].healthy {
			c++
		}
	}
	return c
}

// unitTotal counts the healthy MIG devices (instances or replicas) advertised under
// mc's resource.
func (n *NodeDevices) unitTotal(mc MIGCount) int {
	c := 0
	for i := range n.gpus {
		g := &n.gpus[i]
		for _, u := range g.units {
			if g.healthy && u.shared == mc.Shared && u.profile == mc.Profile {
				c++
			}
		}
	}
	return c
}

// scratchSlots sizes the stack buffers for free instances and replicas (8 GPUs × 7
// instances fit; more spill to the heap).
const scratchSlots = 64

// slot is a free MIG instance or replica: GPU position in n.gpus and slot index, with
// its GPU's free count (the sort key, computed once).
type slot struct{ pos, k, free int }

// freeWhole appends to out the positions of GPUs that can go whole now; a dynamic GPU
// with nothing carved only for a filtered (DRA) request.
func (n *NodeDevices) freeWhole(r Request, out []int) []int {
	for i := range n.gpus {
		g := &n.gpus[i]
		if !eligible(g, r) {
			continue
		}
		if (g.kind == unitWhole && !g.wholeUsed) || (g.kind == unitShare && g.entirelyFree()) ||
			(g.kind == unitDynamic && r.Filter != nil && g.entirelyFree()) {
			out = append(out, i)
		}
	}
	return out
}

// freeInstances appends to out the free MIG units (instances, or replicas of time-sliced
// instances) of profile ("" = any) under strategy, advertised under the plain or the
// ".shared" name, fullest GPU first, then lowest index and unit.
func (n *NodeDevices) freeInstances(r Request, profile string, shared bool, strategy MIGStrategy, out []slot) []slot {
	from := len(out)
	for i := range n.gpus {
		g := &n.gpus[i]
		if !eligible(g, r) || g.kind != unitMIG || g.sharing.EffectiveMIGStrategy() != strategy {
			continue
		}
		free := g.freeUnitCount()
		for k := range g.units {
			u := &g.units[k]
			if g.instUsed[k] || u.shared != shared || (profile != "" && u.profile != profile) {
				continue
			}
			if u.replica < 0 || g.replicaAllowed(u, r) {
				out = append(out, slot{i, k, free})
			}
		}
	}
	sortFullestFirst(out[from:])
	return out
}

// freeReplicas appends to out the free replicas advertised as name, fullest GPU first.
func (n *NodeDevices) freeReplicas(r Request, name resources.Name, out []slot) []slot {
	from := len(out)
	for i := range n.gpus {
		g := &n.gpus[i]
		if !eligible(g, r) || g.kind != unitReplica || replicaResource(*g.sharing) != name ||
			g.sharing.CheckContainerReplicas(name, r.containerReplicas()) != nil {
			continue
		}
		free := g.freeReplicaCount()
		for k, used := range g.replicaUsed {
			if !used {
				out = append(out, slot{i, k, free})
			}
		}
	}
	sortFullestFirst(out[from:])
	return out
}

// replicaRule is the one-replica-per-container refusal of the first replicated GPU or
// time-sliced MIG device serving name that the request's largest container breaks; nil
// when none does.
func (n *NodeDevices) replicaRule(r Request, name resources.Name) error {
	for i := range n.gpus {
		g := &n.gpus[i]
		if !eligible(g, r) || !g.replicates(name) {
			continue
		}
		if err := g.sharing.CheckContainerReplicas(name, r.containerReplicas()); err != nil {
			return err
		}
	}
	return nil
}

// replicates reports whether g advertises replicas under name.
func (g *gpuState) replicates(name resources.Name) bool {
	if g.kind == unitReplica {
		return replicaResource(*g.sharing) == name
	}
	for _, u := range g.units {
		if u.replica >= 0 && u.name == name {
			return true
		}
	}
	return false
}

// sortFullestFirst orders slots by their GPU's free count, then position, then slot
// (a total order, so no stable sort is needed).
func sortFullestFirst(s []slot) { slices.SortFunc(s, compareSlots) }

func compareSlots(a, b slot) int {
	if a.free != b.free {
		return cmp.Compare(a.free, b.free)
	}
	if a.pos != b.pos {
		return cmp.Compare(a.pos, b.pos)
	}
	return cmp.Compare(a.k, b.k)
}

func (g *gpuState) freeReplicaCount() int {
	c := 0
	for _, u := range g.replicaUsed {
		if !u {
			c++
		}
	}
	return c
}

func (n *NodeDevices) wholeAssignment(pos []int) Assignment {
	a := Assignment{Devices: make([]Device, len(pos))}
	for i, p := range pos {
		g := &n.gpus[p]
		a.Devices[i] = Device{GPU: g.spec.Index, Kind: WholeGPU, Milli: resources.MilliPerGPU, Memory: g.model.Memory}
	}
	return a
}

// slotAssignment is the devices of free slots: MIG units on MIG GPUs, replicas on
// replicated GPUs.
func (n *NodeDevices) slotAssignment(slots []slot) Assignment {
	a := Assignment{Devices: make([]Device, len(slots))}
	for i, s := range slots {
		if g := &n.gpus[s.pos]; g.kind == unitMIG {
			a.Devices[i] = g.unitDevice(s.k)
		} else {
			a.Devices[i] = g.replicaDevice(s.k)
		}
	}
	return a
}

func (g *gpuState) replicaDevice(k int) Device {
	s := g.sharing
	return Device{GPU: g.spec.Index, Kind: ReplicaDevice, Replica: k, Milli: replicaMilli(s.Replicas), Memory: s.ReplicaMemory(*g.model)}
}
