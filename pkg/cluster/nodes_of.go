package cluster

import "github.com/gantry-sched/gantry/pkg/api"

// NodesOf expands the objects' NodePools and reads their v1 Nodes: the cluster the
// objects describe, with nothing bound. The simulator's first snapshot and validate's
// never-fits check both start from it.
func NodesOf(objs *api.Objects) ([]Node, error) {
	var nodes []Node
	for _, p := range objs.NodePools {
		ns, err := ExpandPool(p)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, ns...)
	}
	for _, kn := range objs.Nodes {
		n, err := NodeFromKube(kn)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}
