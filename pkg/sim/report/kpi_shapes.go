package report

import (
	"cmp"
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// ShapeKind says which GPUs can serve a pod shape.
type ShapeKind string

const (
	ShapeWhole    ShapeKind = "whole"    // GPUs whole GPUs, each entirely free
	ShapeFraction ShapeKind = "fraction" // a share of one GPU (gantry.dev/gpu-milli)
	ShapeMIG      ShapeKind = "mig"      // a MIG instance of a profile
	ShapeShared   ShapeKind = "shared"   // a time-sliced or MPS replica
)

// GPUShape is the GPU part of one pod's request, reduced to what fragmentation and
// stranded-capacity math needs.
type GPUShape struct {
	Kind    ShapeKind          `json:"kind"`
	GPUs    int                `json:"gpus,omitempty"`    // whole GPUs (ShapeWhole)
	Milli   resources.MilliGPU `json:"milli,omitempty"`   // share of one GPU (ShapeFraction)
	Profile string             `json:"profile,omitempty"` // MIG profile (ShapeMIG)
}

// ShapeCount is how many pods of a workload have a shape: FGD's task distribution.
type ShapeCount struct {
	Shape GPUShape `json:"shape"`
	Count int64    `json:"count"`
}

// ShapeOf extracts the GPU shape of a per-pod request; false for pods without GPUs.
func ShapeOf(perPod resources.Vector) (GPUShape, bool) {
	if n := perPod[resources.NvidiaGPU]; n > 0 {
		return GPUShape{Kind: ShapeWhole, GPUs: int(n)}, true
	}
	if m := resources.MilliGPU(perPod[resources.GPUMilli]); m > 0 {
		if m%resources.MilliPerGPU == 0 {
			return GPUShape{Kind: ShapeWhole, GPUs: int(m / resources.MilliPerGPU)}, true
		}
		if m < resources.MilliPerGPU {
			return GPUShape{Kind: ShapeFraction, Milli: m}, true
		}
	}
	if perPod[resources.NvidiaGPUShared] > 0 {
		return GPUShape{Kind: ShapeShared}, true
	}
	for _, name := range perPod.Names() {
		if p, ok := name.MIGProfile(); ok {
			return GPUShape{Kind: ShapeMIG, Profile: p}, true
		}
	}
	return GPUShape{}, false
}

// ShapesOf counts the GPU shapes of every pod of the workloads (Count pods per pod set),
// sorted so the result is deterministic.
func ShapesOf(workloads []api.Workload) []ShapeCount {
	counts := map[GPUShape]int64{}
	for i := range workloads {
		for _, ps := range workloads[i].PodSets {
			if s, ok := ShapeOf(ps.Requests); ok {
				counts[s] += int64(ps.Count)
			}
		}
	}
	return sortShapes(counts)
}

func sortShapes(counts map[GPUShape]int64) []ShapeCount {
	out := make([]ShapeCount, 0, len(counts))
	for s, n := range counts {
		out = append(out, ShapeCount{Shape: s, Count: n})
	}
	slices.SortFunc(out, func(a, b ShapeCount) int {
		return cmp.Or(cmp.Compare(a.Shape.Kind, b.Shape.Kind), cmp.Compare(a.Shape.GPUs, b.Shape.GPUs),
			cmp.Compare(a.Shape.Milli, b.Shape.Milli), cmp.Compare(a.Shape.Profile, b.Shape.Profile))
	})
	return out
}

// gpuFree is a GPU's free share in the common unit: 0 for unhealthy GPUs.
func gpuFree(g sim.GPUState) resources.MilliGPU {
	if !g.Healthy || g.Allocated >= resources.MilliPerGPU {
		return 0
	}
	return resources.MilliPerGPU - g.Allocated
}

// usable reports whether GPU g could serve one GPU of shape s. MIG and replica shapes
// are matched on "has a free piece" only: the sample does not say which profile a free
// MIG instance has, so the MIG figures are optimistic.
func usable(g sim.GPUState, s GPUShape) bool {
	if !g.Healthy {
		return false
	}
	mode := devices.SharingMode(g.Mode)
	switch s.Kind {
	case ShapeWhole:
		return (mode == devices.Exclusive || mode == devices.Fractional || mode == "") && g.Allocated == 0
	case ShapeFraction:
		return mode == devices.Fractional && gpuFree(g) >= s.Milli
	case ShapeMIG:
		return mode == devices.MIG && g.FreePieces > 0
	case ShapeShared:
		return (mode == devices.TimeSlicing || mode == devices.MPS) && g.FreePieces > 0
	}
	return false
}

// canHost reports whether one pod of shape s fits on the GPUs of ready node n.
func canHost(n *sim.NodeState, s GPUShape) bool {
	if !n.Ready {
		return false
	}
	need := 1
	if s.Kind == ShapeWhole {
		need = s.GPUs
	}
	fit := 0
	for _, g := range n.GPUs {
		if usable(g, s) {
			fit++
		}
	}
	return fit >= need
}

// nodeFragment is FGD's fragment of node n for shape s: all of the node's free GPU
// capacity when the pod cannot run there at all, else the free capacity of the GPUs that
// cannot serve it. A node that is not ready has no capacity.
func nodeFragment(n *sim.NodeState, s GPUShape) resources.MilliGPU {
	if !n.Ready {
		return 0
	}
	if !canHost(n, s) {
		return nodeFree(n)
	}
	var frag resources.MilliGPU
	for _, g := range n.GPUs {
		if !usable(g, s) {
			frag += gpuFree(g)
		}
	}
	return frag
}

// strandedCapacity is the free capacity that none of the shapes can use: on each node,
// the free share of every GPU that is a fragment for every shape. Without shapes nothing
// is demanded, so nothing is stranded.
func strandedCapacity(nodes []sim.NodeState, shapes []GPUShape) resources.MilliGPU {
	if len(shapes) == 0 {
		return 0
	}
	var out resources.MilliGPU
	for i := range nodes {
		n := &nodes[i]
		if !n.Ready {
			continue
		}
		hostable := make([]bool, len(shapes))
		for j, s := range shapes {
			hostable[j] = canHost(n, s)
		}
		for _, g := range n.GPUs {
			f := gpuFree(g)
			if f == 0 {
				continue
			}
			used := false
			for j, s := range shapes {
				if hostable[j] && usable(g, s) {
					used = true
					break
				}
			}
			if !used {
				out += f
			}
		}
	}
	return out
}

// nodeFree is the free GPU capacity of a node.
func nodeFree(n *sim.NodeState) resources.MilliGPU {
	var free resources.MilliGPU
	for _, g := range n.GPUs {
		free += gpuFree(g)
	}
	return free
}
