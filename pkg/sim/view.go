package sim

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/view"
)

// View is what an operator sees of the simulation at its current time: cohorts,
// ClusterQueues with quota, usage, borrowing and fair share, every workload of the
// input (not yet submitted and finished ones included) with why it waits, and the nodes
// with their GPUs' devices and holders. A workload's layer, reason, details, remedy,
// position and ETA are Explain's, so the view and `gantry explain` never disagree.
// Elapsed is the simulated time; At stays zero.
func (s *Simulator) View() view.Snapshot {
	out := view.Snapshot{Source: "simulation", Elapsed: s.now}
	out.Queues = s.viewQueues()
	out.Cohorts = view.CohortsOf(s.objs.Cohorts, out.Queues)
	out.Workloads = make([]view.Workload, 0, len(s.order))
	for _, id := range s.order {
		out.Workloads = append(out.Workloads, s.viewWorkload(id))
	}
	out.Nodes = view.NodesOf(s.snap, func(n *cluster.Node) bool { return !s.cordon[n.Name] })
	for name := range s.offline {
		st := s.offlineNodeState(name)
		out.Nodes = append(out.Nodes, view.Node{Name: st.Name, Pool: st.Pool, CapacityType: st.CapacityType})
	}
	out.Sort()
	return out
}

// viewQueues are the ClusterQueues as the quota now stands (after any quota change),
// with their pending and admitted workloads counted as State counts them.
func (s *Simulator) viewQueues() []view.Queue {
	pending, admitted := s.countByQueue()
	names := s.quota.ClusterQueues()
	out := make([]view.Queue, 0, len(names))
	for _, name := range names {
		cq, ok := s.quota.ClusterQueue(name)
		if !ok {
			continue
		}
		q := view.QueueOf(s.quota, cq)
		q.Pending, q.Admitted = pending[name], admitted[name]
		out = append(out, q)
	}
	return out
}

// viewWorkload is one workload now, its reasons taken from Explain.
func (s *Simulator) viewWorkload(id api.WorkloadID) view.Workload {
	st := s.wls[id]
	e, _ := s.Explain(id) // id comes from s.order: always found
	w := view.Workload{
		ID: string(id), LocalQueue: st.w.Queue, ClusterQueue: st.clusterQueue, Priority: st.w.Priority,
		Phase: viewPhase(st), Layer: e.Layer, Reason: e.Reason, Details: e.Details, Remedy: e.Remedy,
		Position: e.Position, ETABasis: e.ETABasis, Progress: e.Progress.Duration(), Preemptions: e.Preemptions,
	}
	w.Pods, w.GPU = view.WorkloadSize(st.w)
	if o := st.w.Owner; o.Kind != "" {
		w.Owner = o.Kind + "/" + o.Name
	}
	if e.ETA != nil {
		eta := max(0, e.ETA.Duration()-s.now) // the view's ETA counts from the snapshot
		w.ETA = &eta
	}
	if classOf(st) == classPending {
		w.Waited = s.now - st.queuedAt
	}
	w.Placements, w.Nodes = viewPlacements(e.Pods)
	return w
}

// viewPlacements converts the pods of an explanation, and lists their distinct nodes
// sorted.
func viewPlacements(pods []PodRecord) ([]view.Pod, []string) {
	var out []view.Pod
	seen := map[string]bool{}
	var nodes []string
	for _, p := range pods {
		out = append(out, view.Pod{Name: p.Name, Node: p.Node, Devices: append([]string(nil), p.Devices...)})
		if p.Node != "" && !seen[p.Node] {
			seen[p.Node] = true
			nodes = append(nodes, p.Node)
		}
	}
	slices.Sort(nodes)
	return out, nodes
}

// viewPhase is the workload's phase as Explain names it; a workload evicted and not
// yet back in its queue is Evicted.
func viewPhase(st *wlState) view.Phase {
	switch st.phase {
	case plan.Pending:
		if !st.submitted {
			return view.NotYet
		}
		return view.Pending
	case plan.Admitted:
		return view.Admitted
	case plan.Running, plan.Preempting:
		return view.Running
	case plan.Evicted, plan.Requeued:
		return view.Evicted
	case plan.Finished:
		return view.Finished
	}
	return view.Phase(st.phase)
}
