package cluster

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// PodRef identifies one pod of a workload: pod Index of pod set PodSet.
type PodRef struct {
	Workload api.WorkloadID
	PodSet   string
	Index    int
}

// String renders "namespace/name/podset-index".
func (p PodRef) String() string { return fmt.Sprintf("%s/%s-%d", p.Workload, p.PodSet, p.Index) }

// less orders pod refs deterministically.
func (p PodRef) less(o PodRef) bool {
	if p.Workload != o.Workload {
		return p.Workload < o.Workload
	}
	if p.PodSet != o.PodSet {
		return p.PodSet < o.PodSet
	}
	return p.Index < o.Index
}

// BoundPod is a pod bound (in a Snapshot) or assumed (in an Overlay) on a node, with the
// exact devices it holds.
type BoundPod struct {
	Ref  PodRef
	Node string
	// Requests are the pod's per-pod requests, GPU resources included. The non-GPU part
	// is charged against the node's Allocatable; the GPU part is what Devices holds.
	Requests resources.Vector
	Devices  devices.Assignment
}

// NonGPU returns the part of requests charged against a node's Allocatable: every
// non-GPU resource, plus one "pods" slot.
func NonGPU(requests resources.Vector) resources.Vector {
	out := make(resources.Vector, len(requests)+1)
	for k, a := range requests {
		if !k.IsGPU() && a != 0 {
			out[k] = a
		}
	}
	if _, ok := out[resources.Pods]; !ok {
		out[resources.Pods] = 1
	}
	return out
}

// ChangeOp is the kind of a Change.
type ChangeOp int

const (
	// OpBind binds Pod (on Pod.Node with Pod.Devices).
	OpBind ChangeOp = iota + 1
	// OpRemove removes the bound pod Pod.Ref, releasing its resources.
	OpRemove
)

func (o ChangeOp) String() string {
	switch o {
	case OpBind:
		return "bind"
	case OpRemove:
		return "remove"
	}
	return fmt.Sprintf("ChangeOp(%d)", int(o))
}

// Change is one step from one snapshot to the next: a pod bound or removed.
type Change struct {
	Op  ChangeOp
	Pod BoundPod
}
