package api

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// Capacity types of nodes, from the label gantry.dev/capacity-type (or the common cloud
// labels the cluster package also understands).
const (
	CapacityOnDemand = "on-demand"
	CapacitySpot     = "spot"
	CapacityReserved = "reserved"

	LabelCapacityType = "gantry.dev/capacity-type"
	LabelNodePool     = "gantry.dev/node-pool"
	LabelNVLinkDomain = "gantry.dev/nvlink-domain"
)

// TopologyLevelSpec gives nodes of a pool a topology label: node i gets the value
// "<Prefix><i/NodesPerDomain>" for label Key (e.g. racks of 4 nodes).
type TopologyLevelSpec struct {
	Key            string
	NodesPerDomain int
	Prefix         string
}

// NodePool is Gantry's compact node kind: Count identical nodes.
type NodePool struct {
	Meta
	Count        int
	GPUModel     string // any name devices.LookupModel accepts
	GPUsPerNode  int
	Sharing      devices.Sharing
	CPU          resources.Amount // milli-CPU per node
	Memory       resources.Amount // bytes per node
	MaxPods      int64
	Extra        resources.Vector // further allocatable resources per node
	NodeLabels   map[string]string
	Taints       []corev1.Taint
	CapacityType string
	Topology     []TopologyLevelSpec
	// GPUsPerNVLinkDomain splits a node's GPUs into NVLink domains; 0 = all in one.
	GPUsPerNVLinkDomain int
}

// Node is a v1 Node read from `kubectl get nodes -o yaml`, kept with its source.
type Node struct {
	Object corev1.Node
	Source Source
}

// ClusterEventType names a simulated cluster event.
type ClusterEventType string

const (
	EventNodeAdd          ClusterEventType = "NodeAdd"
	EventNodeRemove       ClusterEventType = "NodeRemove"
	EventNodeFail         ClusterEventType = "NodeFail"
	EventNodeRecover      ClusterEventType = "NodeRecover"
	EventSpotInterruption ClusterEventType = "SpotInterruption"
	EventSpotReturn       ClusterEventType = "SpotReturn"
	EventMIGRelayout      ClusterEventType = "MIGRelayout"
	EventQuotaChange      ClusterEventType = "QuotaChange"
)

// ClusterEvent is Gantry's ClusterEvent kind: something that happens to the cluster at a
// simulated time.
type ClusterEvent struct {
	Meta
	Type ClusterEventType
	At   time.Duration
	// Target: named nodes, or every node of a pool.
	Nodes []string
	Pool  string
	// NodeAdd: a pool spec whose nodes appear (its Count nodes).
	AddPool *NodePool
	// SpotInterruption: warning before the nodes go away (workloads checkpoint during it).
	Notice time.Duration
	// SpotInterruption: the capacity comes back after this long (0 = never).
	ReturnAfter time.Duration
	// MIGRelayout: the new sharing config, and how long the GPUs are unavailable.
	Sharing         *devices.Sharing
	ReconfigureTime time.Duration
	// QuotaChange: new resource groups for ClusterQueue.
	ClusterQueue   string
	ResourceGroups []ResourceGroup
}
