package placement

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// MaxScore is the top of every scorer's range [0, MaxScore]. Scores are integers scaled
// by a million so that small differences (a few milli-GPU of fragmentation) still rank.
const MaxScore int64 = 1_000_000

// Candidate is everything a scorer may read about putting one pod on one node. All of it
// is the state before the pod lands; Assignment is what the device model would give.
type Candidate struct {
	Index      int
	Node       *cluster.Node
	Free       resources.Vector     // free non-GPU resources
	GPUFree    []resources.MilliGPU // free milli-GPU per GPU
	GPUMode    devices.SharingMode  // the node's GPU sharing mode ("" without GPUs)
	Assignment devices.Assignment
	Pod        *PodRequest
	// nums, when set, carries the node's cpu and memory numbers (what Free and
	// Node.Allocatable hold) so scorers skip map look-ups on the hot path.
	nums *cpuMemNums
}

// cpuMemNums is a node's free and allocatable cpu and memory.
type cpuMemNums struct{ freeCPU, freeMem, allocCPU, allocMem resources.Amount }

// Scorer ranks a feasible candidate in [0, MaxScore]; higher is better. Scorers are pure
// functions of the candidate (and of their own read-only parameters).
type Scorer interface {
	Name() string
	Score(c *Candidate) int64
}

// WeightedScorer is a scorer with an integer weight.
type WeightedScorer struct {
	Scorer Scorer
	Weight int64
}

// Scorer names accepted by ScorersFor and NewPolicy.
const (
	ScoreBinpack         = "binpack"
	ScoreSpread          = "spread"
	ScoreFragmentation   = "fragmentation"
	ScoreWholeGPUIslands = "whole-gpu-islands"
	ScorePreferNoSched   = "prefer-no-schedule"
)

// DefaultScorers is the default without knowledge of the workload: GPU-weighted
// bin-packing, whole-GPU islands and avoidance of PreferNoSchedule taints.
func DefaultScorers() []WeightedScorer {
	return []WeightedScorer{{Binpack{}, 2}, {WholeGPUIslands{}, 1}, {PreferNoSchedule{}, 1}}
}

// DefaultScorersFor is the default once the workload's shapes are known: the
// fragmentation scorer (which also weighs the GPU that cpu and memory leave stranded and
// the demand of pods tied to a node's GPU model) and avoidance of PreferNoSchedule
// taints. On the openb trace it leaves less GPU unallocated than the FGD paper's policy
// on every variant (docs/simulator-kpis.md). Without GPU shapes it is DefaultScorers.
func DefaultScorersFor(shapes *ShapeStats) []WeightedScorer {
	if shapes == nil || shapes.Total() == 0 {
		return DefaultScorers()
	}
	return fragmentationScorers(shapes)
}

// fragmentationScorers are the fragmentation scorer on shapes and taint avoidance.
func fragmentationScorers(shapes *ShapeStats) []WeightedScorer {
	return []WeightedScorer{{Fragmentation{Shapes: shapes}, 1}, {PreferNoSchedule{}, 1}}
}

// ScorersFor turns a queue's placement policy into scorers; an empty policy gives
// DefaultScorersFor(shapes). shapes feeds the fragmentation scorer (nil: it has no data
// and scores every node the same). Unknown names and non-positive weights are errors
// naming them.
func ScorersFor(p api.PlacementPolicy, shapes *ShapeStats) ([]WeightedScorer, error) {
	if len(p.Scorers) == 0 {
		return DefaultScorersFor(shapes), nil
	}
	out := make([]WeightedScorer, 0, len(p.Scorers)+1)
	for k, ws := range p.Scorers {
		s, err := scorerByName(ws.Name, shapes)
		if err != nil {
			return nil, fmt.Errorf("placement.scorers[%d].name: %w", k, err)
		}
		if ws.Weight <= 0 {
			return nil, fmt.Errorf("placement.scorers[%d].weight: %d must be positive", k, ws.Weight)
		}
		out = append(out, WeightedScorer{s, ws.Weight})
	}
	return out, nil
}

func scorerByName(name string, shapes *ShapeStats) (Scorer, error) {
	switch name {
	case ScoreBinpack:
		return Binpack{}, nil
	case ScoreSpread:
		return Spread{}, nil
	case ScoreFragmentation:
		return Fragmentation{Shapes: shapes}, nil
	case ScoreWholeGPUIslands:
		return WholeGPUIslands{}, nil
	case ScorePreferNoSched:
		return PreferNoSchedule{}, nil
	}
	return nil, fmt.Errorf("unknown scorer %q: want %s, %s, %s, %s or %s", name, ScoreBinpack, ScoreSpread, ScoreFragmentation, ScoreWholeGPUIslands, ScorePreferNoSched)
}

// twinSafe reports whether every scorer is a built-in one that reads only what twin
// nodes share (free and allocatable resources, free GPU shares, GPU mode, the device
// assignment, taints), never a node's name, index or labels, so twins score the same
// and placement may score one of them for all. Other scorers see every node. The
// fragmentation scorer reads labels once some observed pod may run only on some nodes
// (its places, fgd_where.go), and twins may differ in labels.
func twinSafe(ss []WeightedScorer) bool {
	for _, s := range ss {
		switch sc := s.Scorer.(type) {
		case Binpack, Spread, WholeGPUIslands, PreferNoSchedule:
		case Fragmentation:
			if sc.Shapes != nil && sc.Shapes.where.constrained() {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// memoSafe reports whether every scorer is a built-in one: a pure function of the node
// (its state, labels included) and the pod request, so a node's verdict may be kept
// while its stamp stays (score_memo.go). The fragmentation scorer's statistics may
// change in place; the memo also keys on their version.
func memoSafe(ss []WeightedScorer) bool {
	for _, s := range ss {
		switch s.Scorer.(type) {
		case Binpack, Spread, WholeGPUIslands, PreferNoSchedule, Fragmentation:
		default:
			return false
		}
	}
	return true
}

// combine is the weighted sum of the scorers.
func combine(ss []WeightedScorer, c *Candidate) int64 {
	var sum int64
	for _, s := range ss {
		sum += s.Weight * s.Scorer.Score(c)
	}
	return sum
}

// gpuWeight makes GPU utilisation count three times as much as cpu or memory in
// binpack and spread: GPUs are the scarce, expensive dimension.
const gpuWeight = 3

// allocatedAfter is the node's weighted utilisation once the pod lands, in
// [0, MaxScore]: cpu, memory and (weighted) GPU milli, each used/capacity.
func allocatedAfter(c *Candidate) int64 {
	var num, den int64
	for _, n := range cpuMemOf(c) {
		if n.capa <= 0 {
			continue
		}
		num += ratio(n.capa-n.free+n.want, n.capa)
		den++
	}
	if len(c.GPUFree) > 0 {
		var free int64
		for _, f := range c.GPUFree {
			free += int64(f)
		}
		capa := int64(len(c.GPUFree)) * int64(resources.MilliPerGPU)
		used := capa - free + int64(c.Assignment.MilliGPU())
		num += gpuWeight * ratio(used, capa)
		den += gpuWeight
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// cpuMem is one of cpu and memory on a candidate: allocatable, free and requested.
type cpuMem struct{ capa, free, want int64 }

func cpuMemOf(c *Candidate) [2]cpuMem {
	if n := c.nums; n != nil && c.Pod != nil {
		return [2]cpuMem{{int64(n.allocCPU), int64(n.freeCPU), int64(c.Pod.cpu)}, {int64(n.allocMem), int64(n.freeMem), int64(c.Pod.mem)}}
	}
	var out [2]cpuMem
	for k, r := range [...]resources.Name{resources.CPU, resources.Memory} {
		out[k] = cpuMem{int64(c.Node.Allocatable[r]), int64(c.Free[r]), int64(c.Pod.NonGPU[r])}
	}
	return out
}

// ratio is used/capa scaled to [0, MaxScore], clamped.
func ratio(used, capa int64) int64 {
	if capa <= 0 || used <= 0 {
		return 0
	}
	if used >= capa {
		return MaxScore
	}
	return used * MaxScore / capa
}

// Binpack prefers the most allocated node (after the pod lands), GPU-weighted, so partly
// used nodes fill up before empty ones.
type Binpack struct{}

func (Binpack) Name() string             { return ScoreBinpack }
func (Binpack) Score(c *Candidate) int64 { return allocatedAfter(c) }

// Spread prefers the least allocated node, GPU-weighted.
type Spread struct{}

func (Spread) Name() string             { return ScoreSpread }
func (Spread) Score(c *Candidate) int64 { return MaxScore - allocatedAfter(c) }

// PreferNoSchedule scores nodes lower for each untolerated PreferNoSchedule taint.
type PreferNoSchedule struct{}

func (PreferNoSchedule) Name() string { return ScorePreferNoSched }
func (PreferNoSchedule) Score(c *Candidate) int64 {
	n := int64(preferNoScheduleCount(c.Node, c.Pod))
	return MaxScore / (1 + n)
}

// WholeGPUIslands keeps untouched whole-GPU nodes free for large training: pods that take
// a MIG slice, a replica or a fraction prefer nodes whose GPUs are partitioned or
// replicated anyway (MIG, time-slicing, MPS), then partly used nodes, and only then
// untouched nodes that could still give whole GPUs (exclusive or fractional); whole-GPU
// pods prefer nodes with fewer untouched GPUs left (partly used ones first).
type WholeGPUIslands struct{}

func (WholeGPUIslands) Name() string { return ScoreWholeGPUIslands }
func (WholeGPUIslands) Score(c *Candidate) int64 {
	if len(c.GPUFree) == 0 {
		return MaxScore // no GPUs at stake
	}
	untouched := 0
	for _, f := range c.GPUFree {
		if f == resources.MilliPerGPU {
			untouched++
		}
	}
	if partialAssignment(c.Assignment) {
		switch {
		case c.GPUMode == devices.MIG || c.GPUMode == devices.TimeSlicing || c.GPUMode == devices.MPS:
			return MaxScore
		case untouched < len(c.GPUFree):
			return MaxScore / 2
		}
		return 0
	}
	return MaxScore - int64(untouched)*MaxScore/int64(len(c.GPUFree)+1)
}

// partialAssignment reports whether the pod holds less than whole GPUs.
func partialAssignment(a devices.Assignment) bool {
	for _, d := range a.Devices {
		if d.Kind != devices.WholeGPU {
			return true
		}
	}
	return false
}
