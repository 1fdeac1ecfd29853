package controller

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
)

// nodeEntry is one Node as converted on its last add or update.
type nodeEntry struct {
	rv   string // resourceVersion converted (a resync redelivers the same)
	name string
	obj  *corev1.Node // as last delivered, converted again when its ResourceSlices change
	// notReadySince is when the node's Ready condition last left True (zero: ready).
	notReadySince time.Time
	node          cluster.Node // valid when ok
	ok            bool         // false: NodeFromKube refused it, so it offers no capacity
	unhealthy     []int        // GPU indices the node agent reported unhealthy
	warnings      []string
}

// convertNode builds the engine's model of n, with the unhealthy GPUs marked; a node
// that advertises no GPUs through the device plugin gets those its DRA driver's
// ResourceSlices publish. It runs once per Node event (and per change of its slices),
// outside the cache lock.
func convertNode(n *corev1.Node, slices []resourcev1.ResourceSlice) nodeEntry {
	e := nodeEntry{rv: n.ResourceVersion, name: n.Name, obj: n, notReadySince: notReadySince(n)}
	node, err := cluster.NodeFromKube(api.Node{Object: *n, Source: api.Source{File: "node " + n.Name}})
	if err == nil {
		err = cluster.WithSliceDevices(&node, slices) // as the simulator reads a node dump
	}
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
	nodes []cluster.Node // by name
	index map[string]int
	// known are all nodes the API server has, converted or not (a node Gantry cannot
	// read is not a lost one); notReady says since when the not-ready ones are.
	known     map[string]bool
	notReady  map[string]time.Time
	unhealthy map[string]map[int]bool // nil when no GPU is unhealthy
	warnings  []string
}

func buildNodeView(entries *keyed[nodeEntry]) *nodeView {
	v := &nodeView{index: map[string]int{}, known: map[string]bool{}, notReady: map[string]time.Time{}}
	for _, e := range entries.sorted() {
		v.warnings = append(v.warnings, e.warnings...)
		v.known[e.name] = true
		if !e.notReadySince.IsZero() {
			v.notReady[e.name] = e.notReadySince
		}
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

// notReadySince is when n's Ready condition left True; zero when it is True. A node
// without the condition yet (just registered) counts as ready: the lifecycle
// controller marks a silent one Unknown.
func notReadySince(n *corev1.Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			if t := c.LastTransitionTime.Time; !t.IsZero() {
				return t
			}
			return time.Unix(0, 0) // not ready for an unknown time: long enough
		}
	}
	return time.Time{}
}
