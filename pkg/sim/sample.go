package sim

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// sample sends the current state to the observers (only when someone listens).
func (s *Simulator) sample() {
	if len(s.opts.Observers) == 0 {
		return
	}
	st := s.State()
	for _, o := range s.opts.Observers {
		o.OnSample(st)
	}
}

// State is the cluster state now: nodes with per-GPU allocation, queues, pending shapes.
func (s *Simulator) State() ClusterState {
	out := ClusterState{T: Seconds(s.now)}
	alloc := s.gpuAllocation()
	for i := 0; i < s.snap.NumNodes(); i++ {
		n := s.snap.Node(i)
		ns := NodeState{Name: n.Name, Pool: n.Pool, CapacityType: n.CapacityType, Ready: !s.cordon[n.Name]}
		if d := s.snap.Devices(i); d != nil {
			for _, g := range d.GPUs() {
				ns.GPUs = append(ns.GPUs, GPUState{
					Index: g.Index, Model: string(g.Model), Mode: string(g.Sharing.Mode),
					Allocated: alloc[n.Name][g.Index], Healthy: g.Healthy,
				})
			}
		}
		out.Nodes = append(out.Nodes, ns)
	}
	for name := range s.offline {
		out.Nodes = append(out.Nodes, NodeState{Name: name, Pool: s.specs[name].Pool, CapacityType: s.specs[name].CapacityType})
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].Name < out.Nodes[j].Name })
	out.Queues = s.queueStates()
	for _, id := range s.live {
		st := s.wls[id]
		if st.phase != plan.Pending || !st.submitted {
			continue
		}
		for _, ps := range st.w.PodSets {
			out.Pending = append(out.Pending, PendingShape{Workload: string(id), Queue: st.clusterQueue, Pods: int(ps.Count), PerPod: gpuPart(ps.Requests)})
		}
	}
	return out
}

// gpuAllocation is milli-GPU in use per node and GPU index, from the bound assignments.
func (s *Simulator) gpuAllocation() map[string]map[int]resources.MilliGPU {
	out := map[string]map[int]resources.MilliGPU{}
	for _, bp := range s.snap.Pods() {
		idx := gpuIndices(bp.Devices)
		if len(idx) == 0 {
			continue
		}
		m := out[bp.Node]
		if m == nil {
			m = map[int]resources.MilliGPU{}
			out[bp.Node] = m
		}
		each := bp.Devices.MilliGPU() / resources.MilliGPU(len(idx))
		for _, g := range idx {
			m[g] += each
		}
	}
	return out
}

func gpuIndices(a devices.Assignment) []int { return a.GPUIndices() }

func (s *Simulator) queueStates() []QueueState {
	// Count pending and running per ClusterQueue in one pass over the live workloads.
	pending, running := map[string]int{}, map[string]int{}
	for _, id := range s.live {
		st := s.wls[id]
		switch {
		case st.phase == plan.Pending && st.submitted:
			pending[st.clusterQueue]++
		case st.phase == plan.Running || st.phase == plan.Preempting:
			running[st.clusterQueue]++
		}
	}
	names := s.quota.ClusterQueues()
	out := make([]QueueState, 0, len(names))
	for _, name := range names {
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
		q.Pending, q.Running = pending[name], running[name]
		out = append(out, q)
	}
	return out
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
