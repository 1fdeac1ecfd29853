package cluster

import (
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Counting what an assignment changes, instead of asking NodeDevices.Free again: on a
// MIG or replica node a recount builds the whole free vector (an allocation per MIG
// resource name), and every assume, forget and undo on such a node refiles it. Each
// whole GPU, MIG instance and replica an assignment holds is exactly one unit of one
// resource in Free's terms, so the counts move by one per device. A share of a
// fractional GPU can turn the GPU's nvidia.com/gpu unit on or off, which the assignment
// alone does not tell: such assignments, devices on unhealthy GPUs (Free does not count
// them) and anything unexpected fall back to the recount. So do devices on a GPU whose
// MIG layout is chosen at allocation time: carving one instance there, or taking the
// GPU whole, changes how many instances of every profile could still be carved (its
// nvidia.com/mig-<profile> counts are alternatives, not units).

// gpuUnit is what one GPU of a node hands out, as Free counts it.
type gpuUnit struct {
	healthy bool
	// dynamic: the GPU's MIG layout is chosen at allocation time, so what a device on it
	// changes is recounted.
	dynamic bool
	// name is what a MIG instance or replica on the GPU is advertised as; "" on a MIG
	// mixed-strategy GPU, where it is the instance's profile (nvidia.com/mig-<profile>).
	name resources.Name
}

// appendUnits appends what each of a node's GPUs hands out, in NodeDevices.GPUs() order.
// A replicated GPU's replicas go by the name of the entry that selects it (its rename,
// or <name>.shared under renameByDefault), found as the device model finds it: by the
// GPU's position among the node's whole GPUs, its index or its UUID.
func appendUnits(out []gpuUnit, gpus []devices.GPU) []gpuUnit {
	whole := 0
	for _, g := range gpus {
		u := gpuUnit{healthy: g.Healthy, dynamic: g.Sharing.DynamicMIG(), name: resources.NvidiaGPU}
		switch s := g.Sharing; s.EffectiveMode() {
		case devices.MIG:
			if len(g.Instances) > 0 && s.EffectiveMIGStrategy() != devices.MIGSingle {
				u.name = ""
			}
		case devices.TimeSlicing, devices.MPS:
			ref := devices.DeviceRef{Position: whole, Index: strconv.Itoa(g.Index), UUID: g.UUID}
			if r, ok := s.Replication(resources.NvidiaGPU, ref); ok {
				u.name = s.AdvertisedName(r)
			}
		}
		if len(g.Instances) == 0 && g.Sharing.EffectiveMode() != devices.MIG {
			whole++
		}
		out = append(out, u)
	}
	return out
}

// shift moves counts (the node's counts before) by what a changes, taken (took) or
// given back; false when a needs the recount (a device on an unhealthy or dynamic GPU,
// anything unexpected). Whole-GPU counts are left as they are:
// they are read from the free shares anyway.
func (g *nodeGroups) shift(st *nodeState, a devices.Assignment, took bool, counts []int32) bool {
	step := int32(1)
	if took {
		step = -1
	}
	for _, d := range a.Devices {
		pos, ok := st.gpuPos[d.GPU]
		if !ok || pos >= len(g.units) || !g.units[pos].healthy || g.units[pos].dynamic {
			return false
		}
		name := resources.NvidiaGPU
		switch d.Kind {
		case devices.WholeGPU:
		case devices.MIGDevice, devices.ReplicaDevice:
			name = g.units[pos].name
		default:
			return false
		}
		k := g.find(name, d.Instance.Profile)
		if k < 0 {
			return false
		}
		if !g.whole[k] {
			counts[k] += step
		}
	}
	return true
}

// find is the position of name among the node's groups; name "" stands for the MIG
// profile's resource (profiles match as the device model matches them, ignoring case).
func (g *nodeGroups) find(name resources.Name, profile string) int {
	for k, n := range g.names {
		if name != "" && n == name {
			return k
		}
		if p, ok := n.MIGProfile(); name == "" && ok && strings.EqualFold(p, profile) {
			return k
		}
	}
	return -1
}
