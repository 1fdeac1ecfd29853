package report

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/sim"
)

// diff turns a whole state into a change against the kept one: every node row (unchanged
// rows are recognised when applied), the names gone, every queue, and the pending
// workloads that appeared, vanished or changed shapes.
func (c *KPICollector) diff(s sim.ClusterState) change {
	ch := change{t: s.T, nodes: s.Nodes, queues: s.Queues}
	present := map[string]bool{}
	for _, n := range s.Nodes {
		present[n.Name] = true
	}
	for _, name := range c.nodes.names {
		if !present[name] {
			ch.gone = append(ch.gone, name)
		}
	}
	now := map[string][]sim.PendingShape{}
	var order []string
	for _, p := range s.Pending {
		if _, seen := now[p.Workload]; !seen {
			order = append(order, p.Workload)
		}
		now[p.Workload] = append(now[p.Workload], p)
	}
	for w := range c.pending.by {
		if _, still := now[w]; !still {
			ch.resolved = append(ch.resolved, w)
		}
	}
	for _, w := range order {
		had, was := c.pending.by[w]
		if was && slices.Equal(had, gpuShapes(now[w])) {
			continue
		}
		if was {
			ch.resolved = append(ch.resolved, w)
		}
		ch.pending = append(ch.pending, now[w]...)
	}
	return ch
}

// gpuShapes are the GPU shapes of pending pod sets, in order.
func gpuShapes(ps []sim.PendingShape) []GPUShape {
	out := []GPUShape{}
	for _, p := range ps {
		if sh, ok := ShapeOf(p.PerPod); ok {
			out = append(out, sh)
		}
	}
	return out
}
