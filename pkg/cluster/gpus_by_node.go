package cluster

import "github.com/gantry-sched/gantry/pkg/devices"

// GPUsByNode maps the name of each node with GPUs to its GPUs (copies, by index): what
// DRA's allocationMode All is charged by (dra.WithNodes). The engine builder, the file
// loader and the controller all derive it from their nodes here, so one cluster charges
// an All claim the same in the simulator and on the API server. Nodes without GPUs are
// left out.
func GPUsByNode(nodes []Node) map[string][]devices.GPU {
	out := make(map[string][]devices.GPU, len(nodes))
	for i := range nodes {
		if d := nodes[i].Devices; d != nil {
			out[nodes[i].Name] = d.GPUs()
		}
	}
	return out
}
