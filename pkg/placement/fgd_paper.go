package placement

import (
	"math"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// The FGD paper's own fragmentation measure (Weng et al., USENIX ATC'23, as its public
// simulator computes it), kept apart from Gantry's so the paper's policy can be
// reproduced exactly:
//   - the target workload ("typical pods") is every pod of the workload, CPU-only pods
//     included, by exact cpu, GPU share, GPU count and GPU model constraint (no memory),
//     the most frequent shapes first until they cover 95% of the pods;
//   - a shape's fragment on a node is all the node's free GPU when the shape takes no
//     GPU, may not use the node's GPU model, lacks cpu or lacks GPUs with enough free
//     share; otherwise the free share of the GPUs with less free than the shape asks;
//   - a node's score is ⌊100·sigmoid(Δ/1000)⌋, Δ the drop in expected fragment
//     (milli-GPU), so nodes within about 40 milli-GPU of each other tie and the tie goes
//     to the first node by name (the simulator's patched scheduler).

// paperShape is a pod as the paper's simulator sees it: exact cpu, GPU share (milli of
// each GPU, 0 for CPU-only pods), whole GPU count (0 for a share) and place.
type paperShape struct {
	cpu   resources.Amount
	milli resources.MilliGPU
	units int
	where placeID
}

// paperCounts counts pods by paperShape. Past maxPaperShapes distinct shapes new ones
// are not counted (the paper's cut keeps the most frequent shapes anyway).
type paperCounts struct {
	counts map[paperShape]int64
}

const maxPaperShapes = 4096

func (c *paperCounts) add(sh paperShape, n int64) {
	if c.counts == nil {
		c.counts = map[paperShape]int64{}
	}
	if _, seen := c.counts[sh]; !seen && len(c.counts) >= maxPaperShapes {
		return
	}
	c.counts[sh] += n
}

// typicalPod is one shape of the paper's target workload with its pod count.
type typicalPod struct {
	paperShape
	count int64
}

// typicalPods is the paper's target workload: its shapes and their total count (the
// frequencies are count/total).
type typicalPods struct {
	pods  []typicalPod
	total int64
	where *whereTable
}

// paperCoverPercent is the share of pods the paper's typical shapes cover.
const paperCoverPercent = 95

// typicalPods builds the paper's target workload from the observed pods: shapes sorted
// by count, larger shapes first among equal counts, cut once they cover 95% of the
// pods. Zero cpu reads as 100 milli-CPU, as the Kubernetes scheduler's non-zero request.
func (s *ShapeStats) typicalPods() typicalPods {
	var all []typicalPod
	var total int64
	for sh, n := range s.paper.counts {
		if sh.cpu == 0 {
			sh.cpu = 100
		}
		all = append(all, typicalPod{paperShape: sh, count: n})
		total += n
	}
	slices.SortFunc(all, func(a, b typicalPod) int { return -s.comparePaper(a, b) })
	var kept int64
	k := 0
	for k < len(all) && kept*100 < paperCoverPercent*total {
		kept += all[k].count
		k++
	}
	return typicalPods{pods: all[:k], total: kept, where: &s.where}
}

// comparePaper orders typical pods by count, then cpu, GPU share, GPU count and place.
func (s *ShapeStats) comparePaper(a, b typicalPod) int {
	switch {
	case a.count != b.count:
		return cmp64(a.count, b.count)
	case a.cpu != b.cpu:
		return cmp64(int64(a.cpu), int64(b.cpu))
	case a.milli != b.milli:
		return cmp64(int64(a.milli), int64(b.milli))
	case a.units != b.units:
		return cmp64(int64(a.units), int64(b.units))
	}
	return strings.Compare(s.where.text(a.where), s.where.text(b.where))
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fragmentAt is the node's paper fragment times the typical pods' total count.
func (t *typicalPods) fragmentAt(cpu resources.Amount, gpu []resources.MilliGPU, places uint64) int64 {
	var sumAll int64
	for _, f := range gpu {
		sumAll += int64(max(f, 0))
	}
	if sumAll == 0 {
		return 0
	}
	var frag int64
	for k := range t.pods {
		tp := &t.pods[k]
		frag += tp.count * tp.fragment(cpu, gpu, places, sumAll)
	}
	return frag
}

// fragment is one typical pod's fragment on a node with sumAll milli-GPU free.
func (tp *typicalPod) fragment(cpu resources.Amount, gpu []resources.MilliGPU, places uint64, sumAll int64) int64 {
	want, n := tp.milli, tp.units
	if tp.units > 0 {
		want = resources.MilliPerGPU
	} else {
		n = 1
	}
	if want == 0 || (tp.where != 0 && places&(1<<tp.where) == 0) || cpu < tp.cpu {
		return sumAll
	}
	var below int64
	fit := 0
	for _, f := range gpu {
		if f >= want {
			fit++
		} else {
			below += int64(max(f, 0))
		}
	}
	if fit < n {
		return sumAll
	}
	return below
}

// sigmoidThresholds are 1000·logit(k/100)·2^16 for k = 1..99, rounded: the drops in
// fragment (milli-GPU, scaled by 2^16) at which ⌊100·sigmoid(Δ/1000)⌋ reaches k.
func sigmoidThresholds() [99]int64 {
	var out [99]int64
	for k := 1; k <= 99; k++ {
		p := float64(k) / 100
		out[k-1] = int64(math.Round(1000 * math.Log(p/(1-p)) * (1 << 16)))
	}
	return out
}

// paperScore is ⌊100·sigmoid(Δ/1000)⌋ for a drop in fragment of drop/total milli-GPU,
// by comparing integers with the thresholds (no float on the decision path).
func paperScore(th *[99]int64, drop, total int64) int64 {
	if total <= 0 {
		return 50
	}
	lhs := drop << 16
	lo, hi := 0, len(th)
	for lo < hi {
		m := (lo + hi) / 2
		if lhs >= th[m]*total {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return int64(lo)
}

// paperFGDRule is the paper's FGD: the node (and, for a share, the GPU) whose paper
// fragment drops most when the pod lands, scored ⌊100·sigmoid(Δ/1000)⌋. The target
// workload is read from the shapes when the policy is made.
type paperFGDRule struct {
	paperTies
	typ typicalPods
	th  [99]int64
}

func newPaperFGDRule(shapes *ShapeStats) *paperFGDRule {
	return &paperFGDRule{typ: shapes.typicalPods(), th: sigmoidThresholds()}
}

func (r *paperFGDRule) judge(v *nodeView) (int64, devices.Assignment) {
	var places uint64
	if r.typ.where.constrained() {
		places = r.typ.where.mask(v.ov.Node(v.i).Labels)
	}
	pod := paperPodOf(v.p)
	cpu := v.nums.freeCPU
	before := r.typ.fragmentAt(cpu, v.gpuFree(), places)
	var buf [16]resources.MilliGPU
	score := func(a devices.Assignment) int64 {
		after := r.typ.fragmentAt(cpu-resources.Amount(pod.cpu), v.freeAfter(a, buf[:0]), places)
		return paperScore(&r.th, before-after, r.typ.total)
	}
	choices := v.shareChoices()
	if len(choices) == 0 {
		return score(v.fit), v.fit
	}
	best, bestScore := choices[0], score(choices[0])
	for _, a := range choices[1:] {
		if s := score(a); s > bestScore {
			best, bestScore = a, s
		}
	}
	return bestScore, best
}
