package placement

import (
	"math/rand"
	"slices"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// The baselines of the FGD paper (Weng et al., USENIX ATC'23), as its public simulator
// (hkust-adsl/kubernetes-scheduler-simulator) scores them: integer scores in [0, 100],
// the highest wins, ties go to the first node by name (the simulator's scheduler is
// patched so; only random draws). Each reads a node as its free cpu and its free
// milli-GPU per GPU (memory is only checked for fit), and a pod as its cpu (0 counts as
// 100 milli-CPU) and its GPU request (share × count, in milli-GPU). Inside the chosen node
// a share takes the GPU with the least free share that fits (the device model's pick),
// except under random (a random GPU that fits) and FGD (the GPU its score prefers); whole
// GPUs take untouched GPUs.

// paperTies makes a rule break ties as the paper's simulator does: by node name.
type paperTies struct{}

func (paperTies) tiesByName() bool { return true }

// The paper normalizes cpu and GPU by the largest node of its cluster.
const (
	paperMaxCPU = 128000 // milli-CPU
	paperMaxGPU = 8000   // milli-GPU
)

// paperRule is the rule of one of the paper's policies, nil for another name.
func paperRule(name string, shapes *ShapeStats) nodeRule {
	switch name {
	case PolicyRandom:
		return randomRule{}
	case PolicyDotProd:
		return dotProdRule{}
	case PolicyClustering:
		return clusteringRule{}
	case PolicyPacking:
		return packingRule{}
	case PolicyBestFit:
		return bestFitRule{}
	case PolicyFGD:
		return newPaperFGDRule(shapes)
	}
	return nil
}

// paperPod is the pod as the paper's scores read it.
type paperPod struct {
	cpu   int64 // milli-CPU, at least 100
	milli int64 // share of each GPU (1000 for whole GPUs, 0 for none)
	count int64 // GPUs (1 for a share)
}

func paperPodOf(p *PodRequest) paperPod {
	out := paperPod{cpu: int64(p.cpu)}
	if out.cpu == 0 {
		out.cpu = 100
	}
	switch g := p.GPU; {
	case g.Milli > 0:
		out.milli, out.count = int64(g.Milli), 1
	case g.Units > 0:
		out.milli, out.count = int64(resources.MilliPerGPU), g.Units
	}
	return out
}

// gpuLeft is the node's free milli-GPU over all its GPUs.
func gpuLeft(free []resources.MilliGPU) int64 {
	var n int64
	for _, f := range free {
		n += int64(max(f, 0))
	}
	return n
}

// randomRule: every node that fits scores the same, so the random tie-break picks one
// uniformly; a share takes a random GPU that fits.
type randomRule struct{}

func (randomRule) judge(v *nodeView) (int64, devices.Assignment) { return 0, v.fit }

func (randomRule) pick(v *nodeView, rnd *rand.Rand) devices.Assignment {
	choices := v.shareChoices()
	if len(choices) == 0 || rnd == nil {
		return v.fit
	}
	return choices[rnd.Intn(len(choices))]
}

// bestFitRule: 100·(1 − ½·cpuLeft/128 cores − ½·gpuLeft/8 GPUs) after the pod lands,
// truncated: the node left with the least cpu and GPU wins.
type bestFitRule struct{ paperTies }

func (bestFitRule) judge(v *nodeView) (int64, devices.Assignment) {
	pod := paperPodOf(v.p)
	cpuLeft := int64(v.nums.freeCPU) - pod.cpu
	left := gpuLeft(v.gpuFree()) - pod.milli*pod.count
	// ½·a/128000 + ½·b/8000 = (a + 16·b)/256000, so the score is (256000 − a − 16b)/2560.
	return (2*paperMaxCPU - cpuLeft - 16*left) / 2560, v.fit
}

// dotProdRule (Tetris): 100·(1 − ½·(cpuLeft·cpu/128² + gpuLeft·gpu/8²)) with both
// normalized to the largest node, before the pod lands, truncated: the node whose free
// resources align least with the pod's demand wins.
type dotProdRule struct{ paperTies }

func (dotProdRule) judge(v *nodeView) (int64, devices.Assignment) {
	pod := paperPodOf(v.p)
	cpuLeft := int64(v.nums.freeCPU)
	if cpuLeft < pod.cpu {
		return 0, v.fit
	}
	const k = paperMaxCPU * paperMaxCPU // = 256·8000²: the GPU term is scaled by 256
	dot := cpuLeft*pod.cpu + 256*gpuLeft(v.gpuFree())*pod.milli*pod.count
	return (2*k - dot) * 100 / (2 * k), v.fit
}

// clusteringRule (GPU clustering): GPU pods go to nodes running pods of the same kind
// (a share, or the same number of whole GPUs): 75-100 when that kind is the node's only
// one, 50-75 among others, 25-50 on a node without GPU pods, 0-25 otherwise, higher
// inside each band the less GPU is left. CPU-only pods score 0 everywhere.
type clusteringRule struct{ paperTies }

func (clusteringRule) judge(v *nodeView) (int64, devices.Assignment) {
	pod := paperPodOf(v.p)
	if pod.milli == 0 {
		return 0, v.fit
	}
	kind := gpuKind(v.fit)
	kinds := v.podKinds()
	base := 25 * (paperMaxGPU - gpuLeft(v.gpuFree())) / paperMaxGPU
	switch {
	case slices.Contains(kinds, kind) && len(kinds) == 1:
		return base + 75, v.fit
	case slices.Contains(kinds, kind):
		return base + 50, v.fit
	case len(kinds) == 0:
		return base + 25, v.fit
	}
	return base, v.fit
}

// gpuKind is a pod's clustering kind: 0 for a share, n for n whole GPUs, -1 for none.
func gpuKind(a devices.Assignment) int {
	n := 0
	for _, d := range a.Devices {
		if d.Kind != devices.WholeGPU {
			return 0
		}
		n++
	}
	if n == 0 {
		return -1
	}
	return n
}

// podKinds lists the kinds of the GPU pods on the node.
func (v *nodeView) podKinds() []int {
	var out []int
	for _, ref := range v.ov.PodsOn(v.i) {
		bp, ok := v.ov.Pod(ref)
		if k := gpuKind(bp.Devices); ok && k >= 0 && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// packingRule (GPU packing): a share on partly used GPUs first (50-100, higher the
// less they keep free), then GPU pods needing untouched GPUs on partly used nodes
// (33-50, fewer untouched GPUs taken is better), then untouched nodes (0-33, fewer GPUs
// is better). CPU-only pods score 0 everywhere.
type packingRule struct{ paperTies }

func (packingRule) judge(v *nodeView) (int64, devices.Assignment) {
	pod := paperPodOf(v.p)
	if pod.milli == 0 {
		return 0, v.fit
	}
	free := v.gpuFree()
	untouched := int64(countAtLeast(free, resources.MilliPerGPU))
	if untouched == int64(len(free)) {
		return max(33-untouched, untouched), v.fit
	}
	// The paper walks the GPUs from the least free up and takes those with room.
	order := make([]int, len(free))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp64(int64(free[a]), int64(free[b])) })
	need, fresh, pct := pod.count, int64(0), int64(0)
	for _, k := range order {
		if need == 0 {
			break
		}
		if int64(free[k]) >= pod.milli {
			need--
			pct += int64(free[k]) * 100 / int64(resources.MilliPerGPU)
			if free[k] == resources.MilliPerGPU {
				fresh++
			}
		}
	}
	switch {
	case need > 0:
		return 0, v.fit
	case fresh > 0:
		return max(50-fresh, 33), v.fit
	}
	return max(100-pct/10, 50), v.fit
}
