package placement

import (
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// slot is one node's cached answer for the pod being placed: whether it fits, with which
// devices and what score. Only the node a pod lands on changes, so only its slot is
// recomputed between the pods of one set.
type slot struct {
	node   int
	ok     bool
	score  int64
	assign devices.Assignment
	// predicted: the score came from a predicted whole-GPU pick and assign is empty; the
	// device model is asked only if this node is chosen (see predictWhole).
	predicted bool
}

// chooser picks nodes for identical pods among a fixed list of nodes.
type chooser struct {
	ov      *cluster.Overlay
	req     *PodRequest
	scorers []WeightedScorer
	rnd     *rand.Rand
	slots   []slot
	fits    []fitEntry // per node, from an optional FitCache; nil without one
	cand    Candidate  // reused for every score, so scoring does not allocate
	nums    cpuMemNums
	guess   []devices.Device
}

// newChooser runs the static checks once and evaluates every remaining node.
func newChooser(ov *cluster.Overlay, nodes []int, req *PodRequest, scorers []WeightedScorer, rnd *rand.Rand, fits *FitCache) *chooser {
	c := &chooser{ov: ov, req: req, scorers: scorers, rnd: rnd, slots: make([]slot, 0, len(nodes))}
	if fits != nil && !req.GPU.IsZero() {
		c.fits = fits.shape(ov, fitKeyOf(req.GPU))
	}
	var scratch [4]Rejection
	for _, i := range nodes {
		// Nodes only fill up while one chooser is in use, so a node that fails the
		// numeric pre-filter now never fits later: it gets no slot at all, and the
		// static checks (label and taint look-ups) run only on nodes with room.
		if !cheapFits(ov, i, req) || len(staticCheck(ov.Node(i), req, false, scratch[:0])) > 0 {
			continue
		}
		c.slots = append(c.slots, slot{node: i})
		c.eval(&c.slots[len(c.slots)-1])
	}
	return c
}

// eval recomputes one slot against the overlay's current state.
func (c *chooser) eval(s *slot) {
	var scratch [4]Rejection
	if !cheapFits(c.ov, s.node, c.req) {
		s.ok = false
		return
	}
	if len(nonGPUCheck(c.ov, s.node, c.req, false, scratch[:0])) > 0 {
		s.ok = false
		return
	}
	if guess, ok := c.predictWhole(s.node); ok {
		s.ok, s.predicted, s.assign = true, true, devices.Assignment{}
		s.score = combine(c.scorers, c.candidate(s.node, guess))
		return
	}
	a, ok := c.fit(s.node, scratch[:0])
	if !ok {
		s.ok = false
		return
	}
	s.ok, s.predicted, s.assign = true, false, a
	s.score = combine(c.scorers, c.candidate(s.node, a))
}

// fit is the device part of the pod on node i (nonGPUCheck has passed): from the
// FitCache when the chooser has one, else from resourceCheck.
func (c *chooser) fit(i int, scratch []Rejection) (devices.Assignment, bool) {
	if c.fits != nil {
		return fitAt(&c.fits[i], c.ov, i, c.req)
	}
	a, rej := resourceCheck(c.ov, i, c.req, false, scratch)
	return a, len(rej) == 0
}

// predictWhole guesses the device model's pick for whole GPUs on an exclusive node: the
// first untouched GPUs. Every scorer sees untouched GPUs of one node as equivalent, so the
// score is exact, and the device model is asked only for the node finally chosen (on a
// 10,000-node cluster that saves thousands of Fit calls per pod set). The guess reuses a
// scratch slice: it is only read while scoring.
func (c *chooser) predictWhole(i int) (devices.Assignment, bool) {
	g := c.req.GPU
	if g.Units <= 0 || len(g.ModelConstraint) > 0 || c.ov.GPUMode(i) != devices.Exclusive {
		return devices.Assignment{}, false
	}
	c.guess = c.guess[:0]
	for k, f := range c.ov.GPUFreeMilli(i) {
		if int64(len(c.guess)) == g.Units {
			break
		}
		if f == resources.MilliPerGPU {
			c.guess = append(c.guess, devices.Device{GPU: k, Kind: devices.WholeGPU, Milli: resources.MilliPerGPU})
		}
	}
	return devices.Assignment{Devices: c.guess}, int64(len(c.guess)) == g.Units
}

// resolve turns a chosen slot's prediction into the device model's real pick.
func (c *chooser) resolve(s *slot) bool {
	if !s.predicted {
		return true
	}
	d := c.ov.Devices(s.node)
	if d == nil {
		return false
	}
	a, ref := d.Fit(c.req.GPU)
	if ref != nil {
		return false
	}
	s.assign, s.predicted = a, false
	return true
}

func (c *chooser) candidate(i int, a devices.Assignment) *Candidate {
	c.nums.freeCPU, c.nums.freeMem = c.ov.FreeCPUMemory(i)
	c.nums.allocCPU, c.nums.allocMem = c.ov.AllocatableCPUMemory(i)
	c.cand = Candidate{Index: i, Node: c.ov.Node(i), Free: c.ov.Free(i), GPUFree: c.ov.GPUFreeMilli(i),
		GPUMode: c.ov.GPUMode(i), Assignment: a, Pod: c.req, nums: &c.nums}
	return &c.cand
}

// best returns the index into slots of the best fitting node, ties broken by the seeded
// random (reservoir sampling, so each tied node is equally likely); -1 when none fits.
func (c *chooser) best() int {
	best, ties := -1, 0
	for k := range c.slots {
		s := &c.slots[k]
		if !s.ok {
			continue
		}
		switch {
		case best < 0 || s.score > c.slots[best].score:
			best, ties = k, 1
		case s.score == c.slots[best].score:
			ties++
			if c.rnd != nil && c.rnd.Intn(ties) == 0 {
				best = k
			}
		}
	}
	return best
}

// cheapFits rejects nodes from numbers alone before asking the device model: a GPU with
// enough free share for fractions, enough untouched GPUs for whole-GPU pods (a necessary
// condition on exclusive and fractional nodes), then free cpu and memory. GPU checks come
// first: they read a small slice, and on a busy cluster they reject most nodes.
func cheapFits(ov *cluster.Overlay, i int, p *PodRequest) bool {
	if g := p.GPU; !g.IsZero() {
		gf := ov.GPUFreeMilli(i)
		if len(gf) == 0 {
			return false
		}
		switch mode := ov.GPUMode(i); {
		case g.Milli > 0:
			if !anyAtLeast(gf, g.Milli) {
				return false
			}
		case g.Units > 0 && (mode == devices.Exclusive || mode == devices.Fractional):
			if countAtLeast(gf, resources.MilliPerGPU) < g.Units {
				return false
			}
		default:
			if !offersAll(ov.DeviceCapacity(i), p.gpuNames) {
				return false
			}
		}
	}
	cpu, mem := ov.FreeCPUMemory(i)
	return cpu >= p.cpu && mem >= p.mem
}

func anyAtLeast(xs []resources.MilliGPU, m resources.MilliGPU) bool {
	for _, x := range xs {
		if x >= m {
			return true
		}
	}
	return false
}

func countAtLeast(xs []resources.MilliGPU, m resources.MilliGPU) int64 {
	var n int64
	for _, x := range xs {
		if x >= m {
			n++
		}
	}
	return n
}

// estimate is how many pods like p node i could still take (an upper bound used to rank
// topology domains; the real placement decides).
func estimate(ov *cluster.Overlay, i int, p *PodRequest) int64 {
	n := int64(1 << 30)
	free := ov.Free(i)
	for name, want := range p.NonGPU {
		if want <= 0 || (name == resources.Pods && ov.Node(i).Allocatable[resources.Pods] == 0) {
			continue
		}
		n = min(n, int64(free[name]/want))
	}
	g := p.GPU
	if g.IsZero() {
		return n
	}
	d := ov.Devices(i)
	if d == nil || !offersAll(ov.DeviceCapacity(i), p.gpuNames) {
		return 0
	}
	mode := ov.GPUMode(i)
	switch {
	case g.Milli > 0:
		var k int64
		for _, f := range ov.GPUFreeMilli(i) {
			k += int64(f / g.Milli)
		}
		return min(n, k)
	case g.Units > 0 && (mode == devices.Exclusive || mode == devices.Fractional):
		// Counted from the per-GPU numbers: no allocation, unlike NodeDevices.Free.
		return min(n, countAtLeast(ov.GPUFreeMilli(i), resources.MilliPerGPU)/g.Units)
	}
	dfree := d.Free()
	for name, want := range g.Vector() {
		if want > 0 {
			n = min(n, int64(dfree[name]/want))
		}
	}
	return n
}

// offersAll reports whether the device capacity has every named resource at all.
func offersAll(capa resources.Vector, names []resources.Name) bool {
	for _, n := range names {
		if capa[n] <= 0 {
			return false
		}
	}
	return true
}
