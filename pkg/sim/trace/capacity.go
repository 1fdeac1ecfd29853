package trace

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// ClusterGPUs is the GPU capacity of the node pools in the common unit.
func ClusterGPUs(nodes []api.NodePool) resources.MilliGPU {
	var total resources.MilliGPU
	for _, p := range nodes {
		total += resources.MilliGPU(int64(p.Count)*int64(p.GPUsPerNode)) * resources.MilliPerGPU
	}
	return total
}
