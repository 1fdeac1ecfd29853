package placement

import (
	"math"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// ShapeStats is a distribution of GPU pod shapes: the engine's is rebuilt from its live
// workloads by a ShapeCensus (fgd_census.go), a benchmark may Observe a pod list up
// front, and the fragmentation scorer reads it. A shape is
// the pod's GPU class (a fraction of one GPU, milli below 1000, or a number of whole
// GPUs) together with its cpu and memory (binned, see shapeKey) and where it may run (its
// node selector and required affinity, see fgd_where.go), because a node whose cpu,
// memory or labels cannot host a shape wastes all its free GPU for that shape (Weng et
// al., ATC'23). CPU-only pods are not counted: by the paper's definition every free GPU is
// fragment for them wherever they land, a term that is the same for every node and so
// cannot change a ranking. Counts are integers, so the expectation is exact.
//
// It also keeps the paper's own view of the same pods (paperCounts: exact cpu, GPU and
// model constraint, CPU-only pods included) for the paper's FGD policy.
//
// Not safe for concurrent Observe and Score.
type ShapeStats struct {
	// classes are the distinct GPU classes, each with its shapes sorted by cpu so that
	// the shapes a node's cpu cannot host are a suffix of the class.
	classes []shapeClass
	// cpuBin and memBin are the current bin widths (milli-CPU, bytes); they double when
	// the count of distinct shapes passes maxShapeKinds.
	cpuBin, memBin resources.Amount
	kinds          int
	total          int64
	// observed counts every pod observed, CPU-only pods included.
	observed int64
	// version changes with every observation and every Reset (Version).
	version int64
	// where numbers the places shapes may run.
	where whereTable
	// load sums the demand of the pods and the capacity of the nodes observed, for the
	// stranding and place pressure terms (fgd_load.go).
	load loadStats
	// paper counts pods by the paper's shape (fgd_paper.go).
	paper paperCounts
}

// shapeClass is one GPU class (milli > 0: a fraction; units > 0: whole GPUs) and the
// cpu/memory/place variants seen with it.
type shapeClass struct {
	milli  resources.MilliGPU
	units  int
	count  int64
	shapes []cpuMemShape
}

// cpuMemShape is one binned cpu/memory request and place with the count of pods that
// asked it.
type cpuMemShape struct {
	cpu, mem resources.Amount
	where    placeID
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

// Version changes whenever a pod or node is observed and at every Reset: scores read
// under one version may be kept while it stays.
func (s *ShapeStats) Version() int64 { return s.version }

// Reset empties the distribution in place (scorers holding s see the change); the
// version moves on, so nothing remembered under an earlier version is reused.
func (s *ShapeStats) Reset() {
	*s = ShapeStats{cpuBin: initialCPUBin, memBin: initialMemBin, version: s.version + 1}
}

// Observe records one arriving pod's per-pod requests, as a pod that may run anywhere.
// Pods without a GPU request and requests the device model cannot parse are ignored.
func (s *ShapeStats) Observe(requests resources.Vector) {
	s.observeRequests(requests, nil, 1)
}

// ObservePodSet records one pod of ps: its requests and where it may run (its node
// selector and required node affinity, such as a GPU model constraint), so that the
// fragmentation scorer keeps nodes of a scarce model for the pods that can only run
// there.
func (s *ShapeStats) ObservePodSet(ps *api.PodSet) {
	s.observeRequests(ps.Requests, placeOf(ps), 1)
}

// observeRequests records n pods of one shape.
func (s *ShapeStats) observeRequests(requests resources.Vector, place []labelReq, n int64) {
	r, err := devices.ParseRequest(requests)
	if err != nil {
		return
	}
	s.observeParsed(r, requests, place, n)
}

// observeParsed is observeRequests with the GPU request r already parsed.
func (s *ShapeStats) observeParsed(r devices.Request, requests resources.Vector, place []labelReq, n int64) {
	if n <= 0 {
		return
	}
	s.observed += n
	s.version++
	cpu, mem := max(requests[resources.CPU], 0), max(requests[resources.Memory], 0)
	where := s.where.id(place)
	s.load.placeAdded(&s.where)
	var milli resources.MilliGPU
	var units int
	switch {
	case r.IsZero():
	case r.Milli > 0 && r.Milli < resources.MilliPerGPU:
		milli = r.Milli
	case r.Milli >= resources.MilliPerGPU:
		units = 1
	case r.Units > 0:
		units = int(min(r.Units, math.MaxInt32))
	default:
		// MIG slices, shared replicas and memory-only shares are sized by the device
		// model per node, so they have no node-independent shape and are not counted.
		return
	}
	s.paper.add(paperShape{cpu: cpu, milli: milli, units: units, where: where}, n)
	s.load.addPod(milli, units, cpu, mem, where, n)
	if milli > 0 || units > 0 {
		s.observeAt(milli, units, cpu, mem, where, n)
	}
}

// observe records a shape that may run anywhere.
func (s *ShapeStats) observe(milli resources.MilliGPU, units int, cpu, mem resources.Amount) {
	s.version++
	s.observeAt(milli, units, cpu, mem, 0, 1)
}

// observeAt records n pods of one GPU shape.
func (s *ShapeStats) observeAt(milli resources.MilliGPU, units int, cpu, mem resources.Amount, where placeID, n int64) {
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
	c.count += n
	s.total += n
	if c.add(cpuMemShape{cpu: roundUp(cpu, s.cpuBin), mem: roundUp(mem, s.memBin), where: where, count: n}) {
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

// shapeLess orders a class's shapes by cpu, then memory, then place.
func shapeLess(a, b cpuMemShape) bool {
	if a.cpu != b.cpu {
		return a.cpu < b.cpu
	}
	if a.mem != b.mem {
		return a.mem < b.mem
	}
	return a.where < b.where
}

// add merges sh into the class's sorted shapes; true when it is a new kind.
func (c *shapeClass) add(sh cpuMemShape) bool {
	i := sort.Search(len(c.shapes), func(i int) bool { return !shapeLess(c.shapes[i], sh) })
	if i < len(c.shapes) && c.shapes[i].cpu == sh.cpu && c.shapes[i].mem == sh.mem && c.shapes[i].where == sh.where {
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
			if s.classes[k].add(cpuMemShape{cpu: roundUp(sh.cpu, s.cpuBin), mem: roundUp(sh.mem, s.memBin), where: sh.where, count: sh.count}) {
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
