package sim

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// sample sends the state to the observers (only when someone listens): what changed to
// DeltaObservers, the whole state to the others. Each is built at most once.
func (s *Simulator) sample() {
	if len(s.opts.Observers) == 0 {
		return
	}
	var delta *StateDelta
	var full *ClusterState
	for _, o := range s.opts.Observers {
		if do, ok := o.(DeltaObserver); ok {
			if delta == nil {
				d := s.delta()
				delta = &d
			}
			do.OnDelta(*delta)
			continue
		}
		if full == nil {
			st := s.State()
			full = &st
		}
		o.OnSample(*full)
	}
}

// State is the cluster state now: nodes with per-GPU allocation, queues, pending shapes.
// It is built from scratch (O(nodes + pods + live workloads)); samples for
// DeltaObservers cost only what changed.
func (s *Simulator) State() ClusterState {
	out := ClusterState{T: Seconds(s.now)}
	alloc := s.gpuAllocation()
	for i := 0; i < s.snap.NumNodes(); i++ {
		out.Nodes = append(out.Nodes, s.snapNodeState(i, alloc[s.snap.Node(i).Name]))
	}
	for name := range s.offline {
		out.Nodes = append(out.Nodes, s.offlineNodeState(name))
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].Name < out.Nodes[j].Name })
	out.Queues = s.queueStates()
	for id := range s.live.all() {
		if st := s.wls[id]; classOf(st) == classPending {
			out.Pending = append(out.Pending, pendingShapes(st)...)
		}
	}
	return out
}

// countByQueue counts pending and running workloads per ClusterQueue in one pass over
// the live workloads.
func (s *Simulator) countByQueue() (pending, running map[string]int) {
	pending, running = map[string]int{}, map[string]int{}
	for id := range s.live.all() {
		st := s.wls[id]
		switch classOf(st) {
		case classPending:
			pending[st.clusterQueue]++
		case classRunning:
			running[st.clusterQueue]++
		}
	}
	return pending, running
}

// snapNodeState is node i of the snapshot with its GPUs' allocation (milli by index).
func (s *Simulator) snapNodeState(i int, alloc map[int]resources.MilliGPU) NodeState {
	n := s.snap.Node(i)
	ns := NodeState{Name: n.Name, Pool: n.Pool, CapacityType: n.CapacityType, Ready: !s.cordon[n.Name]}
	if d := s.snap.Devices(i); d != nil {
		for _, g := range d.GPUs() {
			ns.GPUs = append(ns.GPUs, GPUState{
				Index: g.Index, Model: string(g.Model), Mode: string(g.Sharing.Mode),
				Allocated: alloc[g.Index], Healthy: g.Healthy,
			})
		}
	}
	return ns
}

// offlineNodeState is a node out of the cluster: not ready, no GPUs.
func (s *Simulator) offlineNodeState(name string) NodeState {
	return NodeState{Name: name, Pool: s.specs[name].Pool, CapacityType: s.specs[name].CapacityType}
}

// pendingShapes are a pending workload's pod sets as a sample lists them.
func pendingShapes(st *wlState) []PendingShape {
	out := make([]PendingShape, 0, len(st.w.PodSets))
	for _, ps := range st.w.PodSets {
		out = append(out, PendingShape{Workload: string(st.w.ID()), Queue: st.clusterQueue, Pods: int(ps.Count), PerPod: gpuPart(ps.Requests)})
	}
	return out
}

// gpuAllocation is milli-GPU in use per node and GPU index, from the bound assignments.
func (s *Simulator) gpuAllocation() map[string]map[int]resources.MilliGPU {
	out := map[string]map[int]resources.MilliGPU{}
	for _, bp := range s.snap.Pods() {
		m := out[bp.Node]
		if m == nil {
			m = map[int]resources.MilliGPU{}
			out[bp.Node] = m
		}
		addAllocation(m, bp.Devices)
	}
	return out
}

// addAllocation adds a pod's devices to per-GPU allocation, split evenly over its GPUs.
func addAllocation(m map[int]resources.MilliGPU, a devices.Assignment) {
	idx := a.GPUIndices()
	if len(idx) == 0 {
		return
	}
	each := a.MilliGPU() / resources.MilliGPU(len(idx))
	for _, g := range idx {
		m[g] += each
	}
}

func (s *Simulator) queueStates() []QueueState {
	pending, running := s.countByQueue()
	names := s.quota.ClusterQueues()
	out := make([]QueueState, 0, len(names))
	for _, name := range names {
		out = append(out, s.queueState(name, pending[name], running[name]))
	}
	return out
}

// queueState is one ClusterQueue's quota, usage and borrowing per resource, with its
// pending and running counts.
func (s *Simulator) queueState(name string, pending, running int) QueueState {
	q := QueueState{Name: name, Nominal: resources.Vector{}, Usage: resources.Vector{}, Borrowed: resources.Vector{}}
	if cq := s.cqs[name]; cq != nil {
		q.Cohort = cq.Cohort
		for _, g := range cq.ResourceGroups {
			for _, f := range g.Flavors {
				for _, r := range f.Resources {
					q.Nominal[r.Name] += s.quota.Nominal(name, f.Name, r.Name)
					q.Usage[r.Name] += s.quota.Usage(name, f.Name, r.Name)
					q.Borrowed[r.Name] += s.quota.Borrowed(name, f.Name, r.Name)
				}
			}
		}
	}
	q.Pending, q.Running = pending, running
	return q
}

// gpuPart keeps the GPU resources of a pod's requests.
func gpuPart(v resources.Vector) resources.Vector {
	out := resources.Vector{}
	for k, a := range v {
		if k.IsGPU() || strings.HasPrefix(string(k), resources.MIGPrefix) {
			out[k] = a
		}
	}
	return out
}
