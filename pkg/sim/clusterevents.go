package sim

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// scheduleClusterEvents puts every api.ClusterEvent on the queue at its time.
func (s *Simulator) scheduleClusterEvents() {
	for i, ev := range s.objs.Events {
		s.queue.schedule(simEvent{at: ev.At, kind: kCluster, index: i})
	}
}

// targets resolves an event's nodes: the named ones, or every known node of the pool.
func (s *Simulator) targets(ev api.ClusterEvent) []string {
	set := map[string]bool{}
	for _, n := range ev.Nodes {
		set[n] = true
	}
	if ev.Pool != "" {
		for name, n := range s.specs {
			if n.Pool == ev.Pool {
				set[name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// clusterEvent applies one cluster event.
func (s *Simulator) clusterEvent(ev api.ClusterEvent) error {
	nodes := s.targets(ev)
	switch ev.Type {
	case api.EventNodeAdd:
		return s.addNodes(ev)
	case api.EventNodeRemove:
		return s.nodesGone(nodes, plan.EvictNodeLost+": node removed", "removed")
	case api.EventNodeFail:
		return s.nodesGone(nodes, plan.EvictNodeLost+": node failed", "failed")
	case api.EventNodeRecover, api.EventSpotReturn:
		return s.nodesBack(nodes)
	case api.EventSpotInterruption:
		return s.spotNotice(ev, nodes)
	case api.EventMIGRelayout:
		return s.relayout(ev, nodes)
	case api.EventQuotaChange:
		return s.quotaChange(ev)
	}
	return fmt.Errorf("simulate: cluster event %s (%s): type %q unknown", ev.Name, ev.Source, ev.Type)
}

func (s *Simulator) addNodes(ev api.ClusterEvent) error {
	if ev.AddPool == nil {
		return fmt.Errorf("simulate: cluster event %s (%s): NodeAdd needs a pool spec", ev.Name, ev.Source)
	}
	ns, err := cluster.ExpandPool(*ev.AddPool)
	if err != nil {
		return fmt.Errorf("simulate: cluster event %s: %w", ev.Name, err)
	}
	for _, n := range ns {
		s.specs[n.Name] = n
		if err := s.putNode(n); err != nil {
			return err
		}
		s.emit(EventRecord{Event: EvNode, Node: n.Name, Change: "added"})
	}
	s.nodesReshaped()
	s.sched.NodesChanged()
	s.dirty = true
	return nil
}

// workloadsOn returns the running or noticed workloads with a pod on any of nodes.
func (s *Simulator) workloadsOn(nodes []string) []*wlState {
	set := map[string]bool{}
	for _, n := range nodes {
		set[n] = true
	}
	var out []*wlState
	for id := range s.live.all() {
		st := s.wls[id]
		if st.phase != plan.Running && st.phase != plan.Preempting {
			continue
		}
		for _, b := range st.bindings {
			if set[b.Node] {
				out = append(out, st)
				break
			}
		}
	}
	return out
}

// nodesGone evicts every gang with a pod on the nodes (whole gangs, at once, losing the
// work since their last checkpoint), then takes the nodes out of the cluster.
func (s *Simulator) nodesGone(nodes []string, why, change string) error {
	for _, st := range s.workloadsOn(nodes) {
		if err := s.evict(st, plan.LayerCluster, why); err != nil {
			return err
		}
		if change == "failed" {
			// A failure, not a planned removal: the requeue policy may hold it back.
			st.failures++
			s.sched.BackOff(st.w.ID(), s.clock(), st.failures)
		}
	}
	if err := s.dropOccupants(nodes); err != nil {
		return err
	}
	for _, n := range nodes {
		if _, ok := s.snap.NodeIndex(n); !ok {
			continue
		}
		next, err := s.snap.WithoutNode(n)
		if err != nil {
			return fmt.Errorf("simulate: %s: %w", why, err)
		}
		s.snap, s.offline[n] = next, change
		delete(s.cordon, n)
		s.touchNode(n)
		s.emit(EventRecord{Event: EvNode, Node: n, Change: change, Reason: why})
	}
	s.dirty = true
	return nil
}

// nodesBack returns offline nodes with their last known spec.
func (s *Simulator) nodesBack(nodes []string) error {
	for _, n := range nodes {
		spec, ok := s.specs[n]
		if _, off := s.offline[n]; !ok || !off {
			continue
		}
		spec.Unschedulable = false
		if err := s.putNode(spec); err != nil {
			return err
		}
		delete(s.offline, n)
		s.emit(EventRecord{Event: EvNode, Node: n, Change: "recovered"})
	}
	s.sched.NodesChanged()
	s.dirty = true
	return nil
}

// putNode adds or replaces a node in the snapshot.
func (s *Simulator) putNode(n cluster.Node) error {
	next, err := s.snap.WithNode(n)
	if err != nil {
		return fmt.Errorf("simulate: node %s: %w", n.Name, err)
	}
	s.snap = next
	s.touchNode(n.Name)
	return nil
}

// spotNotice: the nodes are cordoned, workloads on them checkpoint during the notice and
// are evicted when it ends; the nodes come back after ReturnAfter when set.
func (s *Simulator) spotNotice(ev api.ClusterEvent, nodes []string) error {
	for _, st := range s.workloadsOn(nodes) {
		r := s.record(st, EvInterrupted)
		r.Reason, r.Layer = fmt.Sprintf("spot interruption %s: %s notice", ev.Name, ev.Notice), string(plan.LayerCluster)
		s.emit(r)
		s.notice(st, ev.Notice, plan.LayerCluster)
	}
	for _, n := range nodes {
		spec, ok := s.specs[n]
		if _, in := s.snap.NodeIndex(n); !ok || !in {
			continue
		}
		spec.Unschedulable = true
		if err := s.putNode(spec); err != nil {
			return err
		}
		s.cordon[n] = true
		s.emit(EventRecord{Event: EvNode, Node: n, Change: "notice", Reason: "spot interruption " + ev.Name})
	}
	s.queue.schedule(simEvent{at: s.now + ev.Notice, kind: kNodesGone, nodes: nodes})
	if ev.ReturnAfter > 0 {
		s.queue.schedule(simEvent{at: s.now + ev.Notice + ev.ReturnAfter, kind: kNodesBack, nodes: nodes})
	}
	s.dirty = true
	return nil
}

// relayout drains the nodes (workloads checkpoint and leave now), keeps them away for
// the reconfiguration time, and brings them back with the new MIG layout.
func (s *Simulator) relayout(ev api.ClusterEvent, nodes []string) error {
	if ev.Sharing == nil {
		return fmt.Errorf("simulate: cluster event %s (%s): MIGRelayout needs sharing", ev.Name, ev.Source)
	}
	for _, st := range s.workloadsOn(nodes) {
		if st.w.Timing.CheckpointEvery > 0 {
			st.saved = st.progressAt(s.now) // drain: checkpoint, then leave
		}
	}
	for _, n := range nodes {
		spec, ok := s.specs[n]
		if !ok {
			continue
		}
		next, err := withSharing(spec, *ev.Sharing)
		if err != nil {
			return fmt.Errorf("simulate: cluster event %s: node %s: %w", ev.Name, n, err)
		}
		s.specs[n] = next
	}
	s.nodesReshaped()
	if err := s.nodesGone(nodes, "MIG re-layout "+ev.Name+": draining", "draining"); err != nil {
		return err
	}
	s.queue.schedule(simEvent{at: s.now + ev.ReconfigureTime, kind: kNodesBack, nodes: nodes})
	return nil
}

// withSharing returns the node with every GPU re-partitioned as sh.
func withSharing(n cluster.Node, sh devices.Sharing) (cluster.Node, error) {
	if n.Devices == nil {
		return n, fmt.Errorf("has no GPUs to re-partition")
	}
	gpus := n.Devices.GPUs()
	if len(gpus) == 0 {
		return n, fmt.Errorf("has no GPUs to re-partition")
	}
	m, err := devices.LookupModel(string(gpus[0].Model))
	if err != nil {
		return n, err
	}
	layouts, err := m.ResolveLayout(sh, len(gpus))
	if err != nil {
		return n, err
	}
	for i := range gpus {
		gpus[i].Sharing, gpus[i].Instances = sh, layouts[i]
	}
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		return n, err
	}
	n.Devices = nd
	return n, nil
}

// quotaChange replaces a ClusterQueue's resource groups. admission's WithResourceGroups
// carries every admitted workload over with its usage still counted, even above a
// lowered quota (Kueue keeps admitted workloads over quota and evicts nothing), so
// nothing new is admitted there until usage drains below the new quota.
func (s *Simulator) quotaChange(ev api.ClusterEvent) error {
	cq, ok := s.cqs[ev.ClusterQueue]
	if !ok {
		return fmt.Errorf("simulate: cluster event %s (%s): clusterQueue %q not found", ev.Name, ev.Source, ev.ClusterQueue)
	}
	q, err := s.quota.WithResourceGroups(cq.Name, ev.ResourceGroups)
	if err != nil {
		return fmt.Errorf("simulate: cluster event %s (%s): %w", ev.Name, ev.Source, err)
	}
	cq.ResourceGroups = ev.ResourceGroups // the model's copy, for explain and KPIs
	s.quota = q
	s.touchAllQueues()
	s.emit(EventRecord{Event: EvQuota, ClusterQueue: cq.Name, Reason: "quota changed by " + ev.Name})
	s.sched.QuotaChanged()
	s.dirty = true
	return nil
}
