package sim

import (
	"cmp"
	"maps"
	"slices"

	"github.com/gantry-sched/gantry/internal/scratch"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// delta is what changed since the last delta (everything, the first time), built from
// the changes noted on the way; the notes are then cleared.
func (s *Simulator) delta() StateDelta {
	if !s.chg.sent {
		s.chg.sent = true
		s.touchEverything()
	}
	d := StateDelta{T: Seconds(s.now)}
	s.deltaWorkloads(&d) // first: it updates the per-queue counts
	for _, name := range sortedSet(s.chg.cqs) {
		if _, known := s.quota.ClusterQueue(name); known {
			c := s.chg.count(name)
			d.Queues = append(d.Queues, s.queueState(name, c[0], c[1]))
		}
	}
	for _, name := range sortedSet(s.chg.nodes) {
		d.Nodes = append(d.Nodes, s.nodeRows(name)...)
	}
	s.chg.nodes = scratch.Reset(s.chg.nodes)
	s.chg.cqs = scratch.Reset(s.chg.cqs)
	return d
}

// touchEverything notes every node and queue, for the first delta.
func (s *Simulator) touchEverything() {
	for i := 0; i < s.snap.NumNodes(); i++ {
		s.touchNode(s.snap.Node(i).Name)
	}
	for name := range s.offline {
		s.touchNode(name)
	}
	s.touchAllQueues()
}

// deltaWorkloads compares each noted workload's class with its class at the last delta:
// newly pending ones add their pod sets, ones no longer pending are resolved, and the
// per-queue counts follow.
func (s *Simulator) deltaWorkloads(d *StateDelta) {
	for _, id := range sortedSet(s.chg.wls) {
		st := s.wls[id]
		was, now := s.chg.class[id], classOf(st)
		if was == now {
			continue
		}
		s.chg.recount(st.clusterQueue, was, -1)
		s.chg.recount(st.clusterQueue, now, +1)
		if now == classNone {
			delete(s.chg.class, id)
		} else {
			s.chg.class[id] = now
		}
		switch {
		case now == classPending:
			d.Pending = append(d.Pending, pendingShapes(st)...)
		case was == classPending:
			d.Resolved = append(d.Resolved, string(id))
		}
	}
	s.chg.wls = scratch.Reset(s.chg.wls)
}

// count is a queue's pending and running tallies.
func (c *changes) count(cq string) *[2]int {
	n := c.counts[cq]
	if n == nil {
		n = &[2]int{}
		c.counts[cq] = n
	}
	return n
}

// recount adds by to a queue's tally of class.
func (c *changes) recount(cq string, class wlClass, by int) {
	if class != classNone {
		c.count(cq)[class-1] += by
	}
}

// nodeRows are a node's rows as State lists them: its snapshot row, and an offline row
// when it is also listed offline.
func (s *Simulator) nodeRows(name string) []NodeState {
	var out []NodeState
	if i, ok := s.snap.NodeIndex(name); ok {
		out = append(out, s.snapNodeState(i, s.nodeAllocation(i)))
	}
	if _, off := s.offline[name]; off {
		out = append(out, s.offlineNodeState(name))
	}
	return out
}

// nodeAllocation is milli-GPU in use per GPU index on node i, from its pods alone.
func (s *Simulator) nodeAllocation(i int) map[int]resources.MilliGPU {
	out := map[int]resources.MilliGPU{}
	for _, ref := range s.snap.PodsOn(i) {
		if bp, ok := s.snap.Pod(ref); ok {
			addAllocation(out, bp.Devices)
		}
	}
	return out
}

// sortedSet is a set's members in order (deltas are deterministic).
func sortedSet[K cmp.Ordered](m map[K]bool) []K {
	return slices.Sorted(maps.Keys(m))
}
