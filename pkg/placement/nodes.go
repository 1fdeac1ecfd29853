package placement

import (
	"math"
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// slot is one node's cached answer for the pod being placed: whether it fits and, in
// the chooser's scores and assigns at the same position, with what score and which
// devices. Only the node a pod lands on changes, so only its slot is recomputed between
// the pods of one set. A chooser holds one slot per candidate, thousands on a large
// fleet, so the slot itself is 8 pointer-free bytes.
type slot struct {
	node int32
	ok   bool
	// predicted: the score came from a predicted whole-GPU pick and no devices are
	// recorded; the device model is asked only if this node is chosen (see predictWhole).
	predicted bool
}

// at is the slot's node index.
func (s *slot) at() int { return int(s.node) }

// chooser picks nodes for identical pods among a fixed list of nodes.
type chooser struct {
	ov      *cluster.Overlay
	req     *PodRequest
	scorers []WeightedScorer
	rnd     *rand.Rand
	slots   []slot
	// scores[k] is slot k's score, noSlot where the slot does not fit: best reads it for
	// every slot and every pod, so it is dense.
	scores []int64
	// assigns[k] is slot k's devices; it is allocated once a slot has some (predicted
	// whole-GPU slots have none until chosen) and may be shorter than slots.
	assigns []devices.Assignment
	fits    []fitEntry // per node, from an optional FitCache; nil without one
	cand    Candidate  // reused for every score, so scoring does not allocate
	nums    cpuMemNums
	guess   []devices.Device
	// twins, when the scorers allow it (twinSafe), maps a class of twin nodes to the
	// slot of its first node, or -1 when that node failed the pre-filter: the other
	// twins get the same answer without being evaluated (see cluster.Overlay.TwinClass).
	twins map[int32]int
	// memo, with a FitCache and built-in scorers, remembers verdicts per node across
	// choosers of the same shape (score_memo.go).
	memo *scoreMemo
}

// noSlot is the score best reads for a slot that does not fit.
const noSlot = math.MinInt64

// newChooser evaluates the candidate nodes among nodes (every node when nodes is nil),
// in the order of nodes.
func newChooser(ov *cluster.Overlay, nodes []int, req *PodRequest, scorers []WeightedScorer, rnd *rand.Rand, fits *FitCache) *chooser {
	c := &chooser{ov: ov, req: req, scorers: scorers, rnd: rnd}
	// A DRA filter may read what differs between twins (a GPU's UUID): each node is
	// then evaluated on its own.
	if twinSafe(scorers) && req.GPU.Filter == nil {
		c.twins = map[int32]int{}
	}
	if fits != nil && !req.GPU.IsZero() {
		c.fits = fits.shape(ov, fitKeyOf(req.GPU))
	}
	if fits != nil {
		c.memo = fits.scoreMemoFor(ov, req, scorers)
	}
	var local cluster.NodeSet
	cand := &local
	if fits != nil {
		cand = &fits.cand // the cache's scratch: read only here
	}
	candidates(ov, req, true, cand)
	if nodes == nil {
		fits.lend(c, cand.Len())
		for i := cand.Next(0); i >= 0; i = cand.Next(i + 1) {
			c.add(i)
		}
	} else {
		fits.lend(c, len(nodes))
		for _, i := range nodes {
			if cand.Has(i) {
				c.add(i)
			}
		}
	}
	return c
}

// add gives candidate node i a slot. Nodes only fill up while one chooser is in use,
// so a node that fails the numeric pre-filter now never fits later: it gets no slot at
// all (the static checks have passed: the candidates are inside the static set). A twin
// of a node already added gets a copy of that node's slot: same fit, same devices, same
// score (nothing has been assumed yet, so that slot is still as evaluated).
func (c *chooser) add(i int) {
	class, twin := int32(-1), false
	if c.twins != nil {
		class, twin = c.ov.TwinClass(i)
	}
	if twin {
		if k, seen := c.twins[class]; seen {
			if k >= 0 {
				s := c.slots[k]
				s.node = int32(i)
				c.slots = append(c.slots, s)
				c.scores = append(c.scores, c.scores[k])
				c.setAssign(len(c.slots)-1, c.assign(k))
			}
			return
		}
	}
	k := -1
	if v := c.verdictAt(i); v.kind != verdictFiltered {
		c.slots = append(c.slots, slot{node: int32(i)})
		c.scores = append(c.scores, noSlot)
		k = len(c.slots) - 1
		c.apply(k, v)
	}
	if twin {
		c.twins[class] = k
	}
}

// assign is slot k's devices.
func (c *chooser) assign(k int) devices.Assignment {
	if k < len(c.assigns) {
		return c.assigns[k]
	}
	return devices.Assignment{}
}

// setAssign records slot k's devices.
func (c *chooser) setAssign(k int, a devices.Assignment) {
	if k >= len(c.assigns) {
		if a.IsZero() {
			return
		}
		if c.assigns == nil {
			c.assigns = make([]devices.Assignment, 0, cap(c.slots))
		}
		c.assigns = append(c.assigns, make([]devices.Assignment, k+1-len(c.assigns))...)
	}
	c.assigns[k] = a
}

// drop marks slot k as not fitting.
func (c *chooser) drop(k int) {
	c.slots[k].ok = false
	c.scores[k] = noSlot
}

// eval recomputes slot k against the overlay's current state.
func (c *chooser) eval(k int) { c.apply(k, c.verdictAt(c.slots[k].at())) }

// apply records verdict v in slot k.
func (c *chooser) apply(k int, v verdict) {
	s := &c.slots[k]
	c.drop(k)
	c.setAssign(k, v.assign)
	switch v.kind {
	case verdictPredicted, verdictFits:
		s.ok, s.predicted = true, v.kind == verdictPredicted
		c.scores[k] = v.score
	}
}

// verdictAt is node i's verdict: from the memo when the node has not changed since it
// was judged for this shape, else judged now (and remembered).
func (c *chooser) verdictAt(i int) verdict {
	if c.memo == nil {
		return c.judge(i)
	}
	e := &c.memo.at[i]
	if ver := c.ov.Version(i); e.version != ver {
		v := c.judge(i)
		*e = memoEntry{version: ver, kind: v.kind, score: v.score}
		return v
	}
	v := verdict{kind: e.kind, score: e.score}
	if v.kind == verdictFits && c.fits != nil {
		v.assign, _ = fitAt(&c.fits[i], c.ov, i, c.req) // the same state: the same answer
	}
	return v
}

// judge checks the pod on node i in its current state: the numeric pre-filter, the
// non-GPU check, the device fit (predicted for whole GPUs), and the score.
func (c *chooser) judge(i int) verdict {
	var scratch [4]Rejection
	if !cheapFits(c.ov, i, c.req) {
		return verdict{kind: verdictFiltered}
	}
	if len(nonGPUCheck(c.ov, i, c.req, false, scratch[:0])) > 0 {
		return verdict{kind: verdictUnfit}
	}
	if guess, ok := c.predictWhole(i); ok {
		return verdict{kind: verdictPredicted, score: combine(c.scorers, c.candidate(i, guess))}
	}
	a, ok := c.fit(i, scratch[:0])
	if !ok {
		return verdict{kind: verdictUnfit}
	}
	return verdict{kind: verdictFits, score: combine(c.scorers, c.candidate(i, a)), assign: a}
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
	// A DRA filter may rule out the GPUs guessed (say, by UUID): the device model judges.
	if g.Units <= 0 || len(g.ModelConstraint) > 0 || g.Filter != nil || c.ov.GPUMode(i) != devices.Exclusive {
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

// pick is chosen slot k's devices: those recorded, or for a prediction the device
// model's real pick (not recorded: the pod is assumed with it and the slot evaluated
// again at once). ok is false when the device model refuses the predicted node.
func (c *chooser) pick(k int) (devices.Assignment, bool) {
	s := &c.slots[k]
	if !s.predicted {
		return c.assign(k), true
	}
	d := c.ov.Devices(s.at())
	if d == nil {
		return devices.Assignment{}, false
	}
	a, ref := d.Fit(c.req.GPU)
	return a, ref == nil
}

func (c *chooser) candidate(i int, a devices.Assignment) *Candidate {
	c.nums.freeCPU, c.nums.freeMem = c.ov.FreeCPUMemory(i)
	c.nums.allocCPU, c.nums.allocMem = c.ov.AllocatableCPUMemory(i)
	c.cand = Candidate{Index: i, Node: c.ov.Node(i), Free: c.ov.Free(i), GPUFree: c.ov.GPUFreeMilli(i),
		GPUMode: c.ov.GPUMode(i), Assignment: a, Pod: c.req, nums: &c.nums}
	return &c.cand
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
