package view

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// NodesOf lists the nodes of a cluster snapshot with their GPUs, the devices on them
// and who holds each, from the pods bound in the snapshot. ready says whether a node
// takes new pods (the simulator cordons nodes under a spot notice; a live cluster reads
// the Node's conditions). Both drivers call it, so a view over files and one over a
// cluster value devices alike.
func NodesOf(snap *cluster.Snapshot, ready func(*cluster.Node) bool) []Node {
	out := make([]Node, 0, snap.NumNodes())
	for i := 0; i < snap.NumNodes(); i++ {
		n := snap.Node(i)
		var held []Holding
		for _, ref := range snap.PodsOn(i) {
			if bp, ok := snap.Pod(ref); ok && !bp.Devices.IsZero() {
				held = append(held, Holding{Holder: string(ref.Workload), Devices: bp.Devices})
			}
		}
		out = append(out, Node{Name: n.Name, Pool: n.Pool, CapacityType: n.CapacityType, Ready: ready(n),
			GPUs: GPUsOf(snap.Devices(i), held)})
	}
	return out
}

// Holding is what one pod holds on a node: its devices and the workload it belongs to.
type Holding struct {
	Holder  string // workload, namespace/name
	Devices devices.Assignment
}

// GPUsOf lists a node's GPUs, each with the devices it is cut into and their holders;
// nil for a node without GPUs.
func GPUsOf(nd *devices.NodeDevices, held []Holding) []GPU {
	if nd == nil {
		return nil
	}
	byGPU := map[int][]heldDevice{}
	for _, h := range held {
		for _, d := range h.Devices.Devices {
			byGPU[d.GPU] = append(byGPU[d.GPU], heldDevice{device: d, holder: h.Holder})
		}
	}
	gpus := nd.GPUs()
	out := make([]GPU, 0, len(gpus))
	for _, g := range gpus {
		out = append(out, gpuOf(g, byGPU[g.Index]))
	}
	return out
}

// heldDevice is one device some workload holds.
type heldDevice struct {
	device devices.Device
	holder string
}

// gpuOf is one GPU with its devices: what the GPU is cut into (whole, its MIG
// instances, its replicas), each with its holder, then the held devices that are not
// among them (fractional shares, replicas of time-sliced MIG instances), by ID.
func gpuOf(g devices.GPU, held []heldDevice) GPU {
	out := GPU{Index: g.Index, Model: string(g.Model), Mode: string(g.Sharing.EffectiveMode()), Healthy: g.Healthy}
	base := baseDevices(g)
	at := make(map[string]int, len(base))
	for i, d := range base {
		at[d.ID] = i
	}
	var extra []Device
	for _, h := range held {
		out.Allocated += h.device.Milli
		id := h.device.ID()
		if i, ok := at[id]; ok {
			base[i].Holder = h.holder
			continue
		}
		extra = append(extra, Device{ID: id, Profile: h.device.Instance.Profile, Share: h.device.Milli, Holder: h.holder})
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].ID < extra[j].ID })
	out.Devices = append(base, extra...)
	return out
}

// baseDevices is what a GPU is cut into, nobody holding anything yet: its MIG
// instances, its time-slicing or MPS replicas, nothing for a GPU handing out fractional
// shares, else the GPU itself.
func baseDevices(g devices.GPU) []Device {
	mode := g.Sharing.EffectiveMode()
	switch {
	case mode == devices.MIG && len(g.Instances) > 0:
		out := make([]Device, 0, len(g.Instances))
		for _, in := range g.Instances {
			d := devices.Device{GPU: g.Index, Kind: devices.MIGDevice, Instance: in}
			out = append(out, Device{ID: d.ID(), Profile: in.Profile, Share: devices.ProfileMilli(in.Profile)})
		}
		return out
	case (mode == devices.TimeSlicing || mode == devices.MPS) && g.Sharing.Replicas > 0:
		out := make([]Device, 0, g.Sharing.Replicas)
		share := resources.MilliPerGPU / resources.MilliGPU(g.Sharing.Replicas)
		for r := 0; r < g.Sharing.Replicas; r++ {
			d := devices.Device{GPU: g.Index, Kind: devices.ReplicaDevice, Replica: r}
			out = append(out, Device{ID: d.ID(), Share: share})
		}
		return out
	case mode == devices.Fractional:
		return nil
	}
	return []Device{{ID: devices.GPUID(g.Index), Share: resources.MilliPerGPU}}
}
