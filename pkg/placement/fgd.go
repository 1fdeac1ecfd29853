package placement

import (
	"math"
	"sort"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// ShapeStats is the distribution of GPU pod shapes seen so far, learned online: the
// engine calls Observe on each arrival and the fragmentation scorer reads it. A shape is
// the pod's GPU class (a fraction of one GPU, milli below 1000, or a number of whole
// GPUs) together with its cpu and memory (binned, see shapeKey), because a node whose
// cpu or memory cannot host a shape wastes all its free GPU for that shape (Weng et al.,
// ATC'23). CPU-only pods are not counted: by the paper's definition every free GPU is
// fragment for them wherever they land, a term that is the same for every node and so
// cannot change a ranking. Counts are integers, so the expectation is exact. Not safe
// for concurrent Observe and Score.
type ShapeStats struct {
	// classes are the distinct GPU classes, each with its shapes sorted by cpu so that
	// the shapes a node's cpu cannot host are a suffix of the class.
	classes []shapeClass
	// cpuBin and memBin are the current bin widths (milli-CPU, bytes); they double when
	// the count of distinct shapes passes maxShapeKinds.
	cpuBin, memBin resources.Amount
	kinds          int
	total          int64
}

// shapeClass is one GPU class (milli > 0: a fraction; units > 0: whole GPUs) and the
// cpu/memory variants seen with it.
type shapeClass struct {
	milli  resources.MilliGPU
	units  int
	count  int64
	shapes []cpuMemShape
}

// cpuMemShape is one binned cpu/memory request with the count of pods that asked it.
type cpuMemShape struct {
	cpu, mem resources.Amount
	count    int64
}

// Binning: cpu is rounded up to 100 milli-CPU and memory to 256 MiB to start with. The
// openb trace has 151 distinct (cpu, memory, GPU) kinds in 25 GPU classes among 8,152
// pods, so this merges almost nothing; past maxShapeKinds cpu/memory variants (beyond one
// per GPU class) both widths double, merging neighbours, until the variants are back
// under the cap. Rounding up can only make a borderline shape look harder to host.
const (
	initialCPUBin = 100
	initialMemBin = 256 << 20
	maxShapeKinds = 512
	maxBin        = resources.Amount(1) << 50 // memory bins reach it first (cpu bins are then 400k cores)
)

// NewShapeStats returns an empty distribution.
func NewShapeStats() *ShapeStats {
	return &ShapeStats{cpuBin: initialCPUBin, memBin: initialMemBin}
}

// Total is the number of GPU pods observed.
func (s *ShapeStats) Total() int64 { return s.total }

// Observe records one arriving pod's per-pod requests. Pods without a GPU request and
// requests the device model cannot parse are ignored.
func (s *ShapeStats) Observe(requests resources.Vector) {
	r, err := devices.ParseRequest(requests)
	if err != nil || r.IsZero() {
		return
	}
	cpu, mem := max(requests[resources.CPU], 0), max(requests[resources.Memory], 0)
	switch {
	case r.Milli > 0 && r.Milli < resources.MilliPerGPU:
		s.observe(r.Milli, 0, cpu, mem)
	case r.Milli >= resources.MilliPerGPU:
		s.observe(0, 1, cpu, mem)
	case r.Units > 0:
		s.observe(0, int(min(r.Units, math.MaxInt32)), cpu, mem)
	}
	// MIG slices and shared replicas are sized by the device model per node, so they
	// have no node-independent shape and are not counted.
}

func (s *ShapeStats) observe(milli resources.MilliGPU, units int, cpu, mem resources.Amount) {
	if s.cpuBin <= 0 || s.memBin <= 0 {
		s.cpuBin, s.memBin = initialCPUBin, initialMemBin // a zero ShapeStats value
	}
	k := sort.Search(len(s.classes), func(i int) bool { return !classLess(s.classes[i], milli, units) })
	if k == len(s.classes) || s.classes[k].milli != milli || s.classes[k].units != units {
		s.classes = append(s.classes, shapeClass{})
		copy(s.classes[k+1:], s.classes[k:])
		s.classes[k] = shapeClass{milli: milli, units: units}
	}
	c := &s.classes[k]
	c.count++
	s.total++
	if c.add(cpuMemShape{cpu: roundUp(cpu, s.cpuBin), mem: roundUp(mem, s.memBin), count: 1}) {
		s.kinds++
	}
	// Every class keeps at least one kind, so only the cpu/memory variants beyond one
	// per class are capped; coarsening ends once bins cover any real request anyway.
	for s.kinds-len(s.classes) > maxShapeKinds && s.memBin < maxBin {
		s.coarsen()
	}
}

// classLess orders classes: fractions by milli, then whole GPUs by count.
func classLess(c shapeClass, milli resources.MilliGPU, units int) bool {
	if c.units != units {
		return c.units < units
	}
	return c.milli < milli
}

// add merges sh into the class's sorted shapes; true when it is a new kind.
func (c *shapeClass) add(sh cpuMemShape) bool {
	i := sort.Search(len(c.shapes), func(i int) bool {
		x := c.shapes[i]
		return x.cpu > sh.cpu || (x.cpu == sh.cpu && x.mem >= sh.mem)
	})
	if i < len(c.shapes) && c.shapes[i].cpu == sh.cpu && c.shapes[i].mem == sh.mem {
		c.shapes[i].count += sh.count
		return false
	}
	c.shapes = append(c.shapes, cpuMemShape{})
	copy(c.shapes[i+1:], c.shapes[i:])
	c.shapes[i] = sh
	return true
}

// coarsen doubles the bin widths and re-bins every shape.
func (s *ShapeStats) coarsen() {
	s.cpuBin, s.memBin = s.cpuBin*2, s.memBin*2
	s.kinds = 0
	for k := range s.classes {
		old := s.classes[k].shapes
		s.classes[k].shapes = nil
		for _, sh := range old {
			if s.classes[k].add(cpuMemShape{cpu: roundUp(sh.cpu, s.cpuBin), mem: roundUp(sh.mem, s.memBin), count: sh.count}) {
				s.kinds++
			}
		}
	}
}

// roundUp rounds a non-negative v up to a multiple of bin, saturating.
func roundUp(v, bin resources.Amount) resources.Amount {
	if v <= 0 {
		return 0
	}
	q := (v-1)/bin + 1
	if q > math.MaxInt64/bin {
		return math.MaxInt64 / bin * bin
	}
	return q * bin
}

// nodeFree is what fragmentation reads of a node: free cpu, memory and GPU shares.
type nodeFree struct {
	cpu, mem resources.Amount
	gpu      []resources.MilliGPU
}

// fragmentationAt is the node's expected GPU fragment times the number of observed pods
// (Weng et al., ATC'23): for each shape, the free GPU milli that shape could not use,
// weighted by how often it was seen. A shape the node cannot host at all (cpu, memory,
// no GPU with enough free share, or fewer untouched GPUs than it asks) cannot use any of
// the free GPU. Otherwise, for a fraction m the GPUs with less than m free are fragment,
// and for whole GPUs the partly used GPUs are.
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
		hosted := c.hostedCount(n.cpu, n.mem)
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

// hostedCount is the number of the class's pods whose cpu and memory fit: the shapes are
// sorted by cpu, so the scan stops at the first one whose cpu does not.
func (c *shapeClass) hostedCount(cpu, mem resources.Amount) int64 {
	var n int64
	for _, sh := range c.shapes {
		if sh.cpu > cpu {
			break
		}
		if sh.mem <= mem {
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
	after := nodeFree{cpu: subFloor(before.cpu, cpu), mem: subFloor(before.mem, mem), gpu: gpu}
	return s.fragmentationAt(after) - s.fragmentationAt(before)
}

// subFloor is a-b for a free figure, floored at -1 (overcommitted: hosts nothing).
func subFloor(a, b resources.Amount) resources.Amount {
	if b <= 0 {
		return a
	}
	return max(a-b, -1)
}

// fragScale is the fragmentation growth (milli-GPU) that maps to a zero score: one
// 8-GPU node going from no fragment to all fragment.
const fragScale = 8 * int64(resources.MilliPerGPU)

// Fragmentation (FGD) prefers the node whose expected GPU fragmentation grows least when
// the pod lands, counting the cpu and memory the pod takes from the node (a GPU pod or a
// CPU-only pod that leaves too little cpu for the typical GPU pod strands the node's free
// GPUs). With no shapes observed it scores every node the same.
type Fragmentation struct {
	Shapes *ShapeStats
}

func (Fragmentation) Name() string { return ScoreFragmentation }

// Score maps a GPU pod's mean growth Δ (milli-GPU per observed pod, in [-fragScale,
// fragScale] on up to 8 GPUs) to MaxScore/2 - Δ·(MaxScore/2)/fragScale, clamped; the
// division by the pod count comes last so that growths below one milli-GPU still rank.
// CPU-only pods are ranked by cpuOnlyScore.
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
	var before nodeFree
	var cpu, mem resources.Amount
	switch {
	case c.nums != nil && c.Pod != nil:
		before = nodeFree{cpu: c.nums.freeCPU, mem: c.nums.freeMem, gpu: c.GPUFree}
		cpu, mem = c.Pod.cpu, c.Pod.mem
	default:
		before = nodeFree{cpu: c.Free[resources.CPU], mem: c.Free[resources.Memory], gpu: c.GPUFree}
		if c.Pod != nil {
			cpu, mem = c.Pod.NonGPU[resources.CPU], c.Pod.NonGPU[resources.Memory]
		}
	}
	d := f.Shapes.delta(before, cpu, mem, c.Assignment.Devices)
	if len(c.Assignment.Devices) > 0 {
		// |d| <= total·(GPUs·1000), so d·MaxScore/2 stays far inside int64 for any
		// realistic pod count (overflow needs ~10^9 observed pods on a 16-GPU node).
		s := MaxScore/2 - d*(MaxScore/2)/(fragScale*f.Shapes.total)
		return min(max(s, 0), MaxScore)
	}
	return cpuOnlyScore(d/f.Shapes.total, c.GPUFree)
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
