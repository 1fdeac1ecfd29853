package cluster

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// LabelHostname is the implicit narrowest topology level every node has.
const LabelHostname = corev1.LabelHostname

// Node is one schedulable node as the pipeline sees it. A Node is treated as immutable
// once it is inside a Snapshot: the free resources live in the snapshot, not here.
type Node struct {
	Name          string
	Labels        map[string]string
	Taints        []corev1.Taint
	Unschedulable bool
	Ready         bool
	// Allocatable holds cpu, memory, pods and non-GPU extended resources. GPU resources
	// are served by Devices (nil on a node without GPUs).
	Allocatable  resources.Vector
	Devices      *devices.NodeDevices
	CapacityType string // api.CapacityOnDemand, api.CapacitySpot or api.CapacityReserved
	Pool         string // NodePool name, or the gantry.dev/node-pool label
	Source       api.Source
	// Warnings lists disagreements found while building the node that were resolved
	// without failing (e.g. labels and device-plugin capacity disagree: capacity wins).
	Warnings []Warning
}

// Warning is a non-fatal finding about a node, naming the field it concerns.
type Warning struct {
	Node    string
	Field   string
	Message string
}

func (w Warning) String() string { return "node " + w.Node + ": " + w.Field + ": " + w.Message }

// GPUCount is the number of physical GPUs of the node.
func (n *Node) GPUCount() int {
	if n.Devices == nil {
		return 0
	}
	return n.Devices.NumGPUs() // GPUs() would copy every GPU to count them
}

// Capacity is the node's total schedulable capacity: Allocatable plus what the device
// layer advertises.
func (n *Node) Capacity() resources.Vector {
	out := n.Allocatable.Clone()
	if n.Devices != nil {
		out.AddInPlace(n.Devices.Capacity())
	}
	return out
}
