package cluster

import (
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// gpuCapacityMilli is each GPU's capacity in milli-GPU, by position in
// NodeDevices.GPUs(): 1000 for a whole, shared or fractional GPU, the sum of its
// instances' shares for a partitioned MIG GPU, 0 when unhealthy. models caches catalog
// look-ups across nodes.
func gpuCapacityMilli(d *devices.NodeDevices, models map[devices.ModelID]devices.Model) []resources.MilliGPU {
	if d == nil {
		return nil
	}
	gpus := d.GPUs()
	out := make([]resources.MilliGPU, len(gpus))
	for k, g := range gpus {
		if !g.Healthy {
			continue
		}
		out[k] = resources.MilliPerGPU
		if len(g.Instances) == 0 {
			continue
		}
		m, ok := models[g.Model]
		if !ok {
			m, _ = devices.LookupModel(string(g.Model))
			models[g.Model] = m
		}
		var sum resources.MilliGPU
		for _, in := range g.Instances {
			if p, ok := m.Profile(in.Profile); ok {
				sum += p.Milli(m.MIG)
			}
		}
		out[k] = sum
	}
	return out
}

// gpuPositions maps GPU index to position in NodeDevices.GPUs() (indices may have gaps).
func gpuPositions(d *devices.NodeDevices) map[int]int {
	if d == nil {
		return nil
	}
	out := map[int]int{}
	for k, g := range d.GPUs() {
		out[g.Index] = k
	}
	return out
}

// chargeGPUs subtracts (sign -1) or adds back (sign +1) an assignment's per-GPU shares.
func (s *nodeState) chargeGPUs(a devices.Assignment, sign resources.MilliGPU) {
	for _, d := range a.Devices {
		if k, ok := s.gpuPos[d.GPU]; ok && k < len(s.gpuFree) {
			s.gpuFree[k] += sign * d.Milli
		}
	}
}

// GPUFreeMilli returns node i's free milli-GPU per GPU, in NodeDevices.GPUs() order
// (read-only). Scorers such as fragmentation read it instead of the device model's
// internals. Nodes built by ExpandPool, NodeFromKube and devices.NewGPUs number their
// GPUs 0..n-1, so there position equals GPU index (see Overlay.GPUPosition otherwise).
func (s *Snapshot) GPUFreeMilli(i int) []resources.MilliGPU { return s.nodes[i].gpuFree }

// GPUFreeMilli returns node i's free milli-GPU per GPU in the overlay (read-only).
func (o *Overlay) GPUFreeMilli(i int) []resources.MilliGPU { return o.state(i).gpuFree }

// GPUPosition maps GPU index gpu of node i to its position in GPUFreeMilli.
func (o *Overlay) GPUPosition(i, gpu int) (int, bool) {
	k, ok := o.state(i).gpuPos[gpu]
	return k, ok
}

// GPUMode is node i's GPU sharing mode (of its first GPU; "" without GPUs). A MIG-mode
// GPU without instances is offered whole and reads as Exclusive.
func (o *Overlay) GPUMode(i int) devices.SharingMode { return o.state(i).mode }

func gpuMode(d *devices.NodeDevices) devices.SharingMode {
	if d == nil {
		return ""
	}
	gpus := d.GPUs()
	if len(gpus) == 0 {
		return ""
	}
	m := gpus[0].Sharing.Mode
	if m == "" || (m == devices.MIG && len(gpus[0].Instances) == 0) {
		return devices.Exclusive
	}
	return m
}

// DeviceCapacity is everything node i's devices offer, used or not (read-only; nil
// without GPUs): a cheap way to tell that a node can never serve a GPU resource.
func (o *Overlay) DeviceCapacity(i int) resources.Vector { return o.state(i).devCap }
