package placement

import (
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// nodeFree is what fragmentation reads of a node: free cpu, memory and GPU shares, and
// the places it meets (whereTable.mask; the zero mask meets "anywhere" only).
type nodeFree struct {
	cpu, mem resources.Amount
	gpu      []resources.MilliGPU
	places   uint64
}

// fragmentationAt is the node's expected GPU fragment times the number of observed pods
// (Weng et al., ATC'23): for each shape, the free GPU milli that shape could not use,
// weighted by how often it was seen. A shape the node cannot host at all (its place, cpu,
// memory, no GPU with enough free share, or fewer untouched GPUs than it asks) cannot
// use any of the free GPU. Otherwise, for a fraction m the GPUs with less than m free
// are fragment, and for whole GPUs the partly used GPUs are.
func (s *ShapeStats) fragmentationAt(n nodeFree) int64 {
	// The positive free shares, sorted, so that the fraction classes (sorted by milli)
	// read "free below m" as a growing prefix instead of scanning every GPU per class.
	var buf [16]resources.MilliGPU
	parts := buf[:0]
	var sumAll, sumPartial int64
	full := 0
	for _, f := range n.gpu {
		if f <= 0 {
			continue
		}
		sumAll += int64(f)
		if f >= resources.MilliPerGPU {
			full++
		} else {
			sumPartial += int64(f)
		}
		parts = insertSorted(parts, f)
	}
	if sumAll == 0 {
		return 0 // nothing free, nothing fragmented
	}
	var frag, below int64
	p := 0
	for k := range s.classes {
		c := &s.classes[k]
		hosted := c.hostedCount(n.cpu, n.mem, n.places)
		frag += (c.count - hosted) * sumAll
		var g int64
		switch {
		case c.units > 0 && full >= c.units:
			g = sumPartial
		case c.units > 0:
			g = sumAll
		default:
			for p < len(parts) && parts[p] < c.milli {
				below += int64(parts[p])
				p++
			}
			g = below
		}
		frag += hosted * g
	}
	return frag
}

// insertSorted inserts f into the ascending slice xs.
func insertSorted(xs []resources.MilliGPU, f resources.MilliGPU) []resources.MilliGPU {
	xs = append(xs, f)
	i := len(xs) - 1
	for i > 0 && xs[i-1] > f {
		xs[i] = xs[i-1]
		i--
	}
	xs[i] = f
	return xs
}

// hostedCount is the number of the class's pods whose cpu, memory and place fit: the
// shapes are sorted by cpu, so the scan stops at the first one whose cpu does not.
func (c *shapeClass) hostedCount(cpu, mem resources.Amount, places uint64) int64 {
	var n int64
	for _, sh := range c.shapes {
		if sh.cpu > cpu {
			break
		}
		if sh.mem <= mem && (sh.where == 0 || places&(1<<sh.where) != 0) {
			n += sh.count
		}
	}
	return n
}

// delta is fragmentationAt(after) - fragmentationAt(before) for a pod of cpu and mem
// taking devs (a device's GPU index is its position in before.gpu).
func (s *ShapeStats) delta(before nodeFree, cpu, mem resources.Amount, devs []devices.Device) int64 {
	var buf [16]resources.MilliGPU
	gpu := buf[:0]
	if len(before.gpu) > len(buf) {
		gpu = make([]resources.MilliGPU, 0, len(before.gpu))
	}
	gpu = append(gpu, before.gpu...)
	for _, d := range devs {
		if d.GPU >= 0 && d.GPU < len(gpu) {
			gpu[d.GPU] -= d.Milli
		}
	}
	after := nodeFree{cpu: subFloor(before.cpu, cpu), mem: subFloor(before.mem, mem), gpu: gpu, places: before.places}
	return s.fragmentationAt(after) - s.fragmentationAt(before)
}

// subFloor is a-b for a free figure, floored at -1 (overcommitted: hosts nothing).
func subFloor(a, b resources.Amount) resources.Amount {
	if b <= 0 {
		return a
	}
	return max(a-b, -1)
}

// growth is what placing a pod of cpu and mem on devs costs, in milli-GPU times the
// observed pod count: the growth of fragmentation (delta), plus the growth of the GPU
// the node's cpu and memory leave stranded, plus the GPU taken times the node's place
// pressure (fgd_load.go).
func (s *ShapeStats) growth(before nodeFree, cpu, mem resources.Amount, devs []devices.Device) int64 {
	d := s.delta(before, cpu, mem, devs)
	var took int64
	for _, dv := range devs {
		took += int64(dv.Milli)
	}
	var free int64
	for _, f := range before.gpu {
		free += int64(max(f, 0))
	}
	cpuOnly := len(devs) == 0
	strand := s.load.stranded(subFloor(before.cpu, cpu), subFloor(before.mem, mem), free-took, cpuOnly) -
		s.load.stranded(before.cpu, before.mem, free, cpuOnly)
	press := took * s.load.pressure(before.places) / 1000
	return d + s.total*(strand+press)
}

// fragScale is the growth (milli-GPU per observed pod) that maps to a zero score: two
// 8-GPU nodes going from nothing lost to all lost.
const fragScale = 16 * int64(resources.MilliPerGPU)

// Fragmentation (FGD and more) prefers the node where the pod wastes least GPU for the
// pods to come: the node whose expected GPU fragmentation grows least when the pod lands
// (counting the cpu and memory the pod takes and the shapes that may not run on the node
// at all, its GPU model not being one they accept), whose cpu and memory leave least GPU
// stranded at the workload's cpu-per-GPU ratio, and whose GPUs the pods tied to its
// places need least (see growth). With no shapes observed it scores every node the same.
type Fragmentation struct {
	Shapes *ShapeStats
}

func (Fragmentation) Name() string { return ScoreFragmentation }

// Score maps a GPU pod's mean growth Δ (see growth; milli-GPU per observed pod, within
// [-fragScale, fragScale] on up to 8 GPUs) to MaxScore/2 - Δ·(MaxScore/2)/fragScale,
// clamped; the division by the pod count comes last so that growths below one
// milli-GPU still rank. CPU-only pods are ranked by cpuOnlyScore.
func (f Fragmentation) Score(c *Candidate) int64 {
	if f.Shapes == nil || f.Shapes.total == 0 {
		return MaxScore / 2
	}
	if len(c.GPUFree) == 0 {
		if len(c.Assignment.Devices) == 0 {
			return cpuOnlyScore(0, nil) // a node without GPUs is the best home for cpu
		}
		return MaxScore / 2
	}
	d := f.Shapes.growth(f.Shapes.before(c), podCPU(c), podMem(c), c.Assignment.Devices)
	if len(c.Assignment.Devices) > 0 {
		// |d| <= total·(GPUs·1000), so d·MaxScore/2 stays far inside int64 for any
		// realistic pod count (overflow needs ~10^9 observed pods on a 16-GPU node).
		s := MaxScore/2 - d*(MaxScore/2)/(fragScale*f.Shapes.total)
		return min(max(s, 0), MaxScore)
	}
	return cpuOnlyScore(d/f.Shapes.total, c.GPUFree)
}

// before is what fragmentation reads of the candidate's node before the pod lands.
func (s *ShapeStats) before(c *Candidate) nodeFree {
	n := nodeFree{gpu: c.GPUFree}
	if c.nums != nil && c.Pod != nil {
		n.cpu, n.mem = c.nums.freeCPU, c.nums.freeMem
	} else {
		n.cpu, n.mem = c.Free[resources.CPU], c.Free[resources.Memory]
	}
	if s.where.constrained() && c.Node != nil {
		n.places = s.where.mask(c.Node.Labels)
	} else {
		n.places = 1
	}
	return n
}

// podCPU and podMem are the candidate pod's cpu and memory requests (0 without a pod).
func podCPU(c *Candidate) resources.Amount {
	switch {
	case c.Pod == nil:
		return 0
	case c.nums != nil:
		return c.Pod.cpu
	}
	return c.Pod.NonGPU[resources.CPU]
}

func podMem(c *Candidate) resources.Amount {
	switch {
	case c.Pod == nil:
		return 0
	case c.nums != nil:
		return c.Pod.mem
	}
	return c.Pod.NonGPU[resources.Memory]
}

// cpuOnlyScore ranks a pod that takes no GPU: by the mean growth d (milli-GPU per
// observed pod, never negative: taking cpu or memory can only strand GPUs), then, among
// equal growth, toward the node with the fewest free GPUs, so that cpu on nodes whose
// GPUs are gone is used first. Zero growth on a node with tieSpan or more free GPUs
// scores MaxScore/2, as a GPU pod with zero growth does.
func cpuOnlyScore(d int64, gpuFree []resources.MilliGPU) int64 {
	var left int64
	for _, g := range gpuFree {
		left += int64(max(g, 0))
	}
	full := (min(left, tieSpan*int64(resources.MilliPerGPU)) + int64(resources.MilliPerGPU) - 1) / int64(resources.MilliPerGPU)
	s := MaxScore/2 - min(max(d, 0), fragScale)*(tieSpan+1) + (tieSpan - full)
	return min(max(s, 0), MaxScore)
}

// tieSpan is the free whole-GPU count the CPU-only tie-break tells apart (0..16); one
// milli-GPU of growth outweighs all of it.
const tieSpan = 16
