package controller

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	corev1 "k8s.io/api/core/v1"
)

// nodeEntry is one Node as converted on its last add or update.
type nodeEntry struct {
	rv        string       // resourceVersion converted (a resync redelivers the same)
	node      cluster.Node // valid when ok
	ok        bool         // false: NodeFromKube refused it, so it offers no capacity
	unhealthy []int        // GPU indices the node agent reported unhealthy
	warnings  []string
}

// convertNode builds the engine's model of n, with the unhealthy GPUs marked. It runs
// once per Node event, outside the cache lock.
func convertNode(n *corev1.Node) nodeEntry {
	e := nodeEntry{rv: n.ResourceVersion}
	node, err := cluster.NodeFromKube(api.Node{Object: *n, Source: api.Source{File: "node " + n.Name}})
	if err != nil {
		e.warnings = append(e.warnings, err.Error())
		return e
	}
	e.node, e.ok = node, true
	bad, err := markUnhealthy(n, node.Devices)
	if err != nil {
		e.warnings = append(e.warnings, err.Error())
	}
	e.unhealthy = bad
	return e
}

// nodeView is every node ready for a snapshot: rebuilt after a node changed, shared
// read-only by the snapshots taken until the next change.
type nodeView struct {
	nodes     []cluster.Node // by name
	index     map[string]int
	unhealthy map[string]map[int]bool // nil when no GPU is unhealthy
	warnings  []string
}

func buildNodeView(entries *keyed[nodeEntry]) *nodeView {
	v := &nodeView{index: map[string]int{}}
	for _, e := range entries.sorted() {
		v.warnings = append(v.warnings, e.warnings...)
		if !e.ok {
			continue
		}
		for _, g := range e.unhealthy {
			if v.unhealthy == nil {
				v.unhealthy = map[string]map[int]bool{}
			}
			if v.unhealthy[e.node.Name] == nil {
				v.unhealthy[e.node.Name] = map[int]bool{}
			}
			v.unhealthy[e.node.Name][g] = true
		}
		v.index[e.node.Name] = len(v.nodes)
		v.nodes = append(v.nodes, e.node)
	}
	return v
}
