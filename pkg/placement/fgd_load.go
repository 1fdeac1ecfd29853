package placement

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Two effects the per-shape fragmentation (one pod ahead) does not see, both measured in
// milli-GPU like it, from the same observed workload:
//
//   - Stranding. A node's free GPUs can only be used with cpu and memory: at the
//     workload's own ratio (cpu and memory its GPU pods ask per GPU), a node with free
//     cpu c and free GPU g can serve at most c/ratio of it, and the rest is stranded.
//     Placing a GPU pod that asks little cpu per GPU on a node short of cpu lowers the
//     stranding; placing a cpu-hungry pod there raises it. A CPU-only pod is judged
//     against the ratio that counts the CPU-only pods' own cpu too: it should go where
//     cpu is left over after every GPU is served, or where no GPU is left.
//   - Place pressure. Pods that may run only on some nodes (a GPU model) need those
//     nodes' GPUs: if a place's share of the GPU demand is larger than its nodes' share
//     of the GPUs, every GPU a pod from elsewhere takes there is likely one a pod of that
//     place will miss. A node's pressure is the sum, over the places it meets, of demand
//     share ÷ capacity share, capped at 1; taking g milli-GPU there costs g × pressure.

// loadStats sums the observed demand and capacity.
type loadStats struct {
	// GPU pods: their GPU (milli-GPU, whole GPUs ×1000), cpu (milli) and memory (MiB).
	gpuMilli, gpuCPU, gpuMemMiB int64
	// CPU-only pods: their cpu and memory.
	cpuOnlyCPU, cpuOnlyMemMiB int64
	// placeGPU is each place's GPU demand (milli-GPU).
	placeGPU [maxPlaces]int64
	// Capacity: the GPUs of the observed nodes, of those meeting each place, and the
	// nodes themselves, to count a place numbered after them.
	capTotal int64
	placeCap [maxPlaces]int64
	nodes    []nodeGPUs
	counted  int // places whose capacity is counted (ids below it)
}

// nodeGPUs is an observed node: its labels and GPU count.
type nodeGPUs struct {
	labels map[string]string
	gpus   int64
}

// addPod adds the demand of n observed pods of one shape.
func (l *loadStats) addPod(milli resources.MilliGPU, units int, cpu, mem resources.Amount, where placeID, n int64) {
	g := int64(milli) + int64(units)*int64(resources.MilliPerGPU)
	memMiB := int64(mem) >> 20
	if g == 0 {
		l.cpuOnlyCPU += n * int64(cpu)
		l.cpuOnlyMemMiB += n * memMiB
		return
	}
	l.gpuMilli += n * g
	l.gpuCPU += n * int64(cpu)
	l.gpuMemMiB += n * memMiB
	l.placeGPU[where] += n * g
}

// placeAdded counts the capacity of places numbered since the last call.
func (l *loadStats) placeAdded(w *whereTable) {
	for ; l.counted < len(w.keys); l.counted++ {
		for _, n := range l.nodes {
			if w.mask(n.labels)&(1<<l.counted) != 0 {
				l.placeCap[l.counted] += n.gpus
			}
		}
	}
}

// ObserveNode records a node of the cluster, its labels and GPU count: the place
// pressure term compares the pods' demand for a place with the GPUs of the nodes that
// meet it. Without observed nodes there is no pressure.
func (s *ShapeStats) ObserveNode(labels map[string]string, gpus int) {
	if gpus <= 0 {
		return
	}
	s.version++
	s.load.placeAdded(&s.where)
	n := nodeGPUs{labels: labels, gpus: int64(gpus)}
	s.load.nodes = append(s.load.nodes, n)
	s.load.capTotal += n.gpus
	m := s.where.mask(labels)
	for id := 0; id < s.load.counted; id++ {
		if m&(1<<id) != 0 {
			s.load.placeCap[id] += n.gpus
		}
	}
}

// ObserveNodePool records the Count nodes of a pool (see ObserveNode) with the labels
// cluster.ExpandPool gives them (the pool's, the GPU product and count, topology).
func (s *ShapeStats) ObserveNodePool(p api.NodePool) error {
	nodes, err := cluster.ExpandPool(p)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		s.ObserveNode(n.Labels, p.GPUsPerNode)
	}
	return nil
}

// stranded is the free GPU (milli) a node with free cpu, memory and GPU cannot serve at
// the workload's ratio; cpuOnly reads the ratio that counts CPU-only pods too.
func (l *loadStats) stranded(cpu, mem resources.Amount, gpu int64, cpuOnly bool) int64 {
	if gpu <= 0 || l.gpuMilli == 0 {
		return 0
	}
	needCPU, needMem := l.gpuCPU, l.gpuMemMiB
	if cpuOnly {
		needCPU, needMem = needCPU+l.cpuOnlyCPU, needMem+l.cpuOnlyMemMiB
	}
	servable := gpu
	if needCPU > 0 {
		servable = min(servable, int64(max(cpu, 0))*l.gpuMilli/needCPU)
	}
	if needMem > 0 {
		servable = min(servable, (int64(max(mem, 0))>>20)*l.gpuMilli/needMem)
	}
	return gpu - servable
}

// pressure is the node's place pressure in thousandths (0..1000), for its place mask.
func (l *loadStats) pressure(places uint64) int64 {
	if l.capTotal == 0 || l.gpuMilli == 0 {
		return 0
	}
	var p int64
	for id := 1; id < l.counted; id++ {
		if places&(1<<id) == 0 || l.placeCap[id] == 0 {
			continue
		}
		// (demand share) / (capacity share), in thousandths.
		p += l.placeGPU[id] * l.capTotal * 1000 / (l.gpuMilli * l.placeCap[id])
		if p >= 1000 {
			return 1000
		}
	}
	return p
}
