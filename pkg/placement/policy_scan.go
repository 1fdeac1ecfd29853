package placement

import (
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A single-pod policy scans the nodes that can hold the pod, scores each with its rule
// and takes the highest score, ties broken at random with the caller's seeded source
// (as the Kubernetes scheduler does: each of n tied nodes wins with chance 1/n) or, for
// the FGD paper's policies, by a node order drawn once per run (nameOrdered). A rule's
// verdict on a node depends only on the node's state and the pod's shape, so it is kept
// per shape and node with the node's stamp, and judged again only where the node
// changed: between two pods of one shape only the nodes that received pods are looked at
// again.

// nodeRule is one policy's judgement of a node that can hold the pod: a score (higher
// wins) and the devices the pod would take there.
type nodeRule interface {
	judge(v *nodeView) (int64, devices.Assignment)
}

// versioned, when a rule implements it, tells verdicts read under other learned data
// apart: a verdict is kept only while the version stays (see ShapeStats.Version).
type versioned interface {
	version() int64
}

// nameOrdered, when a rule implements it and returns true, breaks ties by a fixed order
// of the nodes instead of a fresh draw for each pod: the order is a random permutation
// of the nodes drawn once from the caller's source (first fit in a random order). The
// FGD paper's simulator does this: its scheduler is patched to take the first tied node
// by name, and it prefixes every node's name with a seeded random rank.
type nameOrdered interface {
	tiesByName() bool
}

// gpuPicker, when a rule implements it, chooses the devices on the node finally chosen
// (a random choice cannot be kept with the verdict).
type gpuPicker interface {
	pick(v *nodeView, rnd *rand.Rand) devices.Assignment
}

// nodeView is what a rule may read of node i for pod p. fit is the device model's pick
// (the GPU with the least free share that fits, or the first untouched GPUs; zero for a
// CPU-only pod).
type nodeView struct {
	ov   *cluster.Overlay
	i    int
	p    *PodRequest
	fit  devices.Assignment
	nums cpuMemNums
	cand Candidate
}

// gpuFree is the node's free milli-GPU per GPU (read-only).
func (v *nodeView) gpuFree() []resources.MilliGPU { return v.ov.GPUFreeMilli(v.i) }

// candidate is the scorers' view of the node with devices a.
func (v *nodeView) candidate(a devices.Assignment) *Candidate {
	v.cand = Candidate{Index: v.i, Node: v.ov.Node(v.i), Free: v.ov.Free(v.i), GPUFree: v.gpuFree(),
		GPUMode: v.ov.GPUMode(v.i), Assignment: a, Pod: v.p, nums: &v.nums}
	return &v.cand
}

// shareChoices lists the devices a one-GPU share could take on the node, one per GPU
// with room, in GPU order (nil for any other request).
func (v *nodeView) shareChoices() []devices.Assignment {
	if !v.p.GPU.IsFraction() {
		return nil
	}
	d := v.ov.Devices(v.i)
	if d == nil {
		return nil
	}
	return d.FitCandidates(v.p.GPU)
}

// freeAfter is the node's free milli-GPU per GPU once the pod takes a (in buf).
func (v *nodeView) freeAfter(a devices.Assignment, buf []resources.MilliGPU) []resources.MilliGPU {
	out := append(buf[:0], v.gpuFree()...)
	for _, d := range a.Devices {
		if k, ok := v.ov.GPUPosition(v.i, d.GPU); ok && k < len(out) {
			out[k] -= d.Milli
		}
	}
	return out
}

// scanEntry is a verdict with the stamp of the node state it was read under.
type scanEntry struct {
	stamp   cluster.Stamp
	version int64
	ok      bool
	score   int64
	assign  devices.Assignment
}

// maxScanShapes bounds the verdicts kept (one slice of nodes per pod shape); past it
// they start over.
const maxScanShapes = 512

// scanPolicy is a Policy made of a nodeRule. It keeps fits and verdicts, so one value
// must not be used from several goroutines at once.
type scanPolicy struct {
	name string
	rule nodeRule
	fits FitCache
	memo map[string][]scanEntry
	cand cluster.NodeSet
	view nodeView
	// rank is each node's place in the tie order of a nameOrdered rule (drawn on the
	// first decision).
	rank []int32
}

func newScanPolicy(name string, r nodeRule) *scanPolicy { return &scanPolicy{name: name, rule: r} }

func (s *scanPolicy) Name() string { return s.name }

// entries are the verdicts kept for p's shape, one per node of ov.
func (s *scanPolicy) entries(ov *cluster.Overlay, p *PodRequest) []scanEntry {
	if s.memo == nil || len(s.memo) > maxScanShapes {
		s.memo = map[string][]scanEntry{}
	}
	key := p.shapeKey()
	e := s.memo[key]
	if len(e) != ov.NumNodes() {
		e = make([]scanEntry, ov.NumNodes())
		s.memo[key] = e
	}
	return e
}

// Choose scans the candidate nodes (see candidates), judging again those that changed,
// and returns the best; ties go to the seeded random (the first in node order without
// one), or for a nameOrdered rule to the first in the run's node order.
func (s *scanPolicy) Choose(ov *cluster.Overlay, p *PodRequest, rnd *rand.Rand) (Choice, bool) {
	entries := s.entries(ov, p)
	var fits []fitEntry
	if !p.GPU.IsZero() {
		fits = s.fits.shape(ov, fitKeyOf(p.GPU))
	}
	var version int64
	if vr, ok := s.rule.(versioned); ok {
		version = vr.version()
	}
	var rank []int32
	if no, ok := s.rule.(nameOrdered); ok && no.tiesByName() {
		rank = s.tieOrder(ov, rnd)
	}
	candidates(ov, p, true, &s.cand)
	best, ties := -1, 0
	var bestScore int64
	for i := s.cand.Next(0); i >= 0; i = s.cand.Next(i + 1) {
		e := &entries[i]
		if st := ov.Stamp(i); e.stamp != st || e.version != version {
			*e = s.judge(ov, i, p, fits)
			e.stamp, e.version = st, version
		}
		switch {
		case !e.ok:
		case best < 0 || e.score > bestScore:
			best, bestScore, ties = i, e.score, 1
		case e.score != bestScore:
		case rank != nil:
			if rank[i] < rank[best] {
				best = i
			}
		default:
			ties++
			if rnd != nil && drawsZero(rnd, ties) {
				best = i
			}
		}
	}
	if best < 0 {
		return Choice{}, false
	}
	a := entries[best].assign
	if pk, ok := s.rule.(gpuPicker); ok {
		s.setView(ov, best, p, a)
		a = pk.pick(&s.view, rnd)
	}
	return Choice{Node: best, NodeName: ov.Node(best).Name, Devices: a}, true
}

// tieOrder is the node ranks of a nameOrdered rule: a permutation drawn from rnd on the
// first decision (snapshot order without a source), kept while the node count stays.
func (s *scanPolicy) tieOrder(ov *cluster.Overlay, rnd *rand.Rand) []int32 {
	n := ov.NumNodes()
	if len(s.rank) == n {
		return s.rank
	}
	s.rank = make([]int32, n)
	for i := range s.rank {
		s.rank[i] = int32(i)
	}
	if rnd != nil {
		for i, r := range rnd.Perm(n) {
			s.rank[i] = int32(r)
		}
	}
	return s.rank
}

// judge checks the pod on node i (the numeric pre-filter, the non-GPU check, the device
// fit) and, when it fits, asks the rule.
func (s *scanPolicy) judge(ov *cluster.Overlay, i int, p *PodRequest, fits []fitEntry) scanEntry {
	var scratch [4]Rejection
	if !cheapFits(ov, i, p) || len(nonGPUCheck(ov, i, p, false, scratch[:0])) > 0 {
		return scanEntry{}
	}
	var a devices.Assignment
	if !p.GPU.IsZero() {
		var ok bool
		if a, ok = fitAt(&fits[i], ov, i, p); !ok {
			return scanEntry{}
		}
	}
	s.setView(ov, i, p, a)
	score, assign := s.rule.judge(&s.view)
	return scanEntry{ok: true, score: score, assign: assign}
}

func (s *scanPolicy) setView(ov *cluster.Overlay, i int, p *PodRequest, fit devices.Assignment) {
	s.view = nodeView{ov: ov, i: i, p: p, fit: fit}
	s.view.nums.freeCPU, s.view.nums.freeMem = ov.FreeCPUMemory(i)
	s.view.nums.allocCPU, s.view.nums.allocMem = ov.AllocatableCPUMemory(i)
}

// scorerRule ranks nodes by weighted scorers on the device model's pick.
type scorerRule struct{ scorers []WeightedScorer }

func (r scorerRule) judge(v *nodeView) (int64, devices.Assignment) {
	return combine(r.scorers, v.candidate(v.fit)), v.fit
}

// version is the sum of the versions of the fragmentation scorers' shapes.
func (r scorerRule) version() int64 { return shapesVersion(r.scorers) }

// shapesVersion is the sum of the versions of the fragmentation scorers' shapes: it
// moves whenever a score those scorers give may change for the same node and pod.
func shapesVersion(ss []WeightedScorer) int64 {
	var n int64
	for _, s := range ss {
		if f, ok := s.Scorer.(Fragmentation); ok && f.Shapes != nil {
			n += f.Shapes.Version()
		}
	}
	return n
}
