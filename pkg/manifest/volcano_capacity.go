package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// volcanoCapacity is the cluster that Volcano queues share by weight: the allocatable of
// every node of the inputs, as Volcano's proportion plugin totals it.
type volcanoCapacity struct {
	total resources.Vector
	// given: the inputs have nodes (v1 Nodes or NodePools). Without them a weight share
	// cannot be derived, which is an error, not a share of nothing.
	given bool
}

// clusterCapacity totals the nodes of objs (NodePools expanded, v1 Nodes with the GPUs
// their device plugin or ResourceSlices offer), through the same cluster.NodesOf the
// simulator starts from. Left out: pods (no workload requests it) and Gantry's own GPU
// accounting units gantry.dev/gpu-milli and gpu-memory, which Volcano does not know and
// which would make every GPU request count twice in a queue covering them.
func clusterCapacity(objs *api.Objects) volcanoCapacity {
	if len(objs.Nodes) == 0 && len(objs.NodePools) == 0 {
		return volcanoCapacity{}
	}
	c := volcanoCapacity{total: resources.Vector{}, given: true}
	nodes, err := cluster.NodesOf(objs)
	if err != nil {
		return c // each bad node or pool was reported where it was read
	}
	for i := range nodes {
		c.total.AddInPlace(nodes[i].Capacity())
	}
	for n, a := range c.total {
		if a <= 0 || n == resources.Pods || n == resources.GPUMilli || n == resources.GPUMemory {
			delete(c.total, n)
		}
	}
	return c
}
