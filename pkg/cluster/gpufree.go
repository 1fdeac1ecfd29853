package cluster

import (
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// gpuPositions maps GPU index to position in NodeDevices.GPUs() (indices may have gaps).
func gpuPositions(gpus []devices.GPU) map[int]int {
	out := map[int]int{}
	for k, g := range gpus {
		out[g.Index] = k
	}
	return out
}

// GPUFreeMilli returns node i's free milli-GPU per GPU, in NodeDevices.GPUs() order
// (read-only). Scorers such as fragmentation read it instead of the device model's
// internals. Nodes built by ExpandPool, NodeFromKube and devices.NewGPUs number their
// GPUs 0..n-1, so there position equals GPU index (see Overlay.GPUPosition otherwise).
func (s *Snapshot) GPUFreeMilli(i int) []resources.MilliGPU { return s.nodes.at(i).gpuFree() }

// GPUFreeMilli returns node i's free milli-GPU per GPU in the overlay (read-only).
func (o *Overlay) GPUFreeMilli(i int) []resources.MilliGPU { return o.state(i).gpuFree() }

// gpuFree is the device model's own per-GPU free view (no mirror to keep in step, so
// replica GPUs read replicas × ⌊1000/replicas⌋ exactly as the device model counts).
func (s *nodeState) gpuFree() []resources.MilliGPU {
	if s.devices == nil {
		return nil
	}
	return s.devices.FreeMilliView()
}

// GPUPosition maps GPU index gpu of node i to its position in GPUFreeMilli.
func (o *Overlay) GPUPosition(i, gpu int) (int, bool) {
	k, ok := o.state(i).gpuPos[gpu]
	return k, ok
}

// GPUMode is node i's GPU sharing mode (of its first GPU; "" without GPUs). A MIG-mode
// GPU without instances is offered whole and reads as Exclusive (so does one whose MIG
// layout is chosen at allocation time: see gpuMode).
func (o *Overlay) GPUMode(i int) devices.SharingMode { return o.state(i).mode }

// gpuMode is the mode GPUMode reports. A GPU whose MIG layout is chosen at allocation
// time (devices.LayoutDynamic) has no fixed instance either, and reads as Exclusive on
// purpose: such a GPU can be given whole while nothing is carved on it, so the free
// index files the node under nvidia.com/gpu by the GPUs whose free share is whole, and
// a whole-GPU DRA claim (counted as nvidia.com/gpu) finds it there. Extended-resource
// requests still get none of its GPUs: the device model refuses them.
func gpuMode(gpus []devices.GPU) devices.SharingMode {
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

// gpuFreeTotal is the node's free milli-GPU over all its GPUs.
func (s *nodeState) gpuFreeTotal() resources.MilliGPU {
	var t resources.MilliGPU
	for _, f := range s.gpuFree() {
		t += f
	}
	return t
}

// FreeGPUMilli is the free milli-GPU of the whole snapshot (kept as pods bind and leave,
// not counted node by node).
func (s *Snapshot) FreeGPUMilli() resources.MilliGPU { return s.freeGPU }

// FreeGPUMilli is the free milli-GPU of the whole overlay.
func (o *Overlay) FreeGPUMilli() resources.MilliGPU { return o.base.freeGPU + o.freeGPU }

// WholeGPUsFree is node i's count of GPUs whose free share is a whole GPU, as the free
// index files it under nvidia.com/gpu (FreeAtLeast); ok is false when the node is not
// counted that way (no GPUs, or a MIG or replica mode).
func (o *Overlay) WholeGPUsFree(i int) (n int64, ok bool) {
	st := o.state(i)
	if st.devices == nil || !wholeMode(st.mode) {
		return 0, false
	}
	return wholeFree(st.gpuFree()), true
}
