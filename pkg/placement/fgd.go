package placement

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// ShapeStats is the distribution of GPU pod shapes seen so far, learned online: the
// engine calls Observe on each arrival and the fragmentation scorer reads it. A shape is
// either a fraction of one GPU (milli below 1000) or a number of whole GPUs; CPU-only
// pods are not counted (they cannot use a GPU fragment). Counts are integers, so the
// expectation below is exact. Not safe for concurrent Observe and Score.
type ShapeStats struct {
	// fracMilli is sorted ascending; fracAbove[k] is the number of fractional pods whose
	// share is larger than fracMilli[k-1] (fracAbove[0] = all fractional pods).
	fracMilli []resources.MilliGPU
	fracCount []int64
	fracAbove []int64
	// whole[k] counts pods that asked for k whole GPUs.
	wholeK     []int
	wholeCount []int64
	total      int64
}

// NewShapeStats returns an empty distribution.
func NewShapeStats() *ShapeStats { return &ShapeStats{} }

// Total is the number of GPU pods observed.
func (s *ShapeStats) Total() int64 { return s.total }

// Observe records one arriving pod's per-pod requests. Pods without a GPU request and
// requests the device model cannot parse are ignored.
func (s *ShapeStats) Observe(requests resources.Vector) {
	r, err := devices.ParseRequest(requests)
	if err != nil || r.IsZero() {
		return
	}
	switch {
	case r.Milli > 0:
		s.observeFraction(r.Milli)
	case r.Units > 0:
		s.observeWhole(int(r.Units))
	}
	// MIG slices and shared replicas are sized by the device model per node, so they
	// have no node-independent shape and are not counted.
}

func (s *ShapeStats) observeFraction(m resources.MilliGPU) {
	if m <= 0 {
		return
	}
	k := sort.Search(len(s.fracMilli), func(i int) bool { return s.fracMilli[i] >= m })
	if k == len(s.fracMilli) || s.fracMilli[k] != m {
		s.fracMilli = append(s.fracMilli, 0)
		copy(s.fracMilli[k+1:], s.fracMilli[k:])
		s.fracMilli[k] = m
		s.fracCount = append(s.fracCount, 0)
		copy(s.fracCount[k+1:], s.fracCount[k:])
		s.fracCount[k] = 0
	}
	s.fracCount[k]++
	s.total++
	s.fracAbove = s.fracAbove[:0]
	var sum int64
	for _, c := range s.fracCount {
		sum += c
	}
	for _, c := range s.fracCount {
		s.fracAbove = append(s.fracAbove, sum)
		sum -= c
	}
}

func (s *ShapeStats) observeWhole(k int) {
	s.total++
	for i, w := range s.wholeK {
		if w == k {
			s.wholeCount[i]++
			return
		}
	}
	s.wholeK = append(s.wholeK, k)
	s.wholeCount = append(s.wholeCount, 1)
}

// fracNeeding is the number of fractional pods that need more than f free milli.
func (s *ShapeStats) fracNeeding(f resources.MilliGPU) int64 {
	// A hand-written binary search: this runs for every GPU of every scored node.
	k, hi := 0, len(s.fracMilli)
	for k < hi {
		if mid := int(uint(k+hi) >> 1); s.fracMilli[mid] > f {
			hi = mid
		} else {
			k = mid + 1
		}
	}
	if k == len(s.fracMilli) {
		return 0
	}
	return s.fracAbove[k]
}

// fragmentation is the node's expected GPU fragment times the number of observed pods:
// for each shape, the free GPU milli that shape could not use, weighted by how often the
// shape was seen (Weng et al., ATC'23). A GPU's free share smaller than a fraction pod's
// share is fragment for that pod; for a pod of k whole GPUs, partly used GPUs are
// fragment when k untouched GPUs remain, and everything is fragment otherwise.
func (s *ShapeStats) fragmentation(free []resources.MilliGPU) int64 {
	var frac, sumAll, sumPartial int64
	full := 0
	for _, f := range free {
		if f <= 0 {
			continue
		}
		frac += int64(f) * s.fracNeeding(f)
		sumAll += int64(f)
		if f == resources.MilliPerGPU {
			full++
		} else {
			sumPartial += int64(f)
		}
	}
	whole := int64(0)
	for i, k := range s.wholeK {
		if full >= k {
			whole += s.wholeCount[i] * sumPartial
		} else {
			whole += s.wholeCount[i] * sumAll
		}
	}
	return frac + whole
}

// fragScale is the fragmentation growth (milli-GPU) that maps to a zero score: one
// 8-GPU node going from no fragment to all fragment.
const fragScale = 8 * int64(resources.MilliPerGPU)

// Fragmentation (FGD) prefers the node whose expected GPU fragmentation grows least when
// the pod lands; with no shapes observed it scores every node the same.
type Fragmentation struct {
	Shapes *ShapeStats
}

func (Fragmentation) Name() string { return ScoreFragmentation }

// Score maps the growth Δ (milli-GPU, in [-fragScale, fragScale] on up to 8 GPUs) to
// MaxScore/2 - Δ·(MaxScore/2)/fragScale, clamped.
func (f Fragmentation) Score(c *Candidate) int64 {
	if f.Shapes == nil || f.Shapes.total == 0 || len(c.GPUFree) == 0 {
		return MaxScore / 2
	}
	var buf [16]resources.MilliGPU
	after := buf[:0]
	if len(c.GPUFree) > len(buf) {
		after = make([]resources.MilliGPU, 0, len(c.GPUFree))
	}
	after = append(after, c.GPUFree...)
	for _, d := range c.Assignment.Devices {
		if d.GPU >= 0 && d.GPU < len(after) {
			after[d.GPU] -= d.Milli
		}
	}
	delta := (f.Shapes.fragmentation(after) - f.Shapes.fragmentation(c.GPUFree)) / f.Shapes.total
	s := MaxScore/2 - delta*(MaxScore/2)/fragScale
	return min(max(s, 0), MaxScore)
}
