package testing

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// WorkloadWrapper builds an api.Workload. Pod-set methods apply to the pod set the last
// PodSet call started; without one, to a pod set "main" of one pod with no requests,
// which Obj also adds to a workload given no pod set.
type WorkloadWrapper struct{ w api.Workload }

// MakeWorkload starts a workload in namespace ns, queued in LocalQueue "lq" and created
// at Epoch.
func MakeWorkload(ns, name string) *WorkloadWrapper {
	return &WorkloadWrapper{api.Workload{Meta: api.Meta{Namespace: ns, Name: name, Created: Epoch()}, Queue: "lq"}}
}

// Queue names the workload's LocalQueue.
func (b *WorkloadWrapper) Queue(q string) *WorkloadWrapper { b.w.Queue = q; return b }

// Priority sets the workload's priority.
func (b *WorkloadWrapper) Priority(p int32) *WorkloadWrapper { b.w.Priority = p; return b }

// Created sets the creation time to Epoch + d.
func (b *WorkloadWrapper) Created(d time.Duration) *WorkloadWrapper {
	b.w.Created = Epoch().Add(d)
	return b
}

// PodSet starts a pod set of count pods with no requests yet.
func (b *WorkloadWrapper) PodSet(name string, count int32) *WorkloadWrapper {
	b.w.PodSets = append(b.w.PodSets, api.PodSet{Name: name, Count: count, Requests: resources.Vector{}})
	return b
}

func (b *WorkloadWrapper) last() *api.PodSet {
	if len(b.w.PodSets) == 0 {
		b.PodSet("main", 1)
	}
	return &b.w.PodSets[len(b.w.PodSets)-1]
}

// Pods sets the pod set's pod count.
func (b *WorkloadWrapper) Pods(n int32) *WorkloadWrapper { b.last().Count = n; return b }

// MinCount sets the pod set's gang minimum (elastic gangs).
func (b *WorkloadWrapper) MinCount(n int32) *WorkloadWrapper { b.last().MinCount = n; return b }

// Request sets one per-pod request of the pod set ("4", "10Gi").
func (b *WorkloadWrapper) Request(r resources.Name, perPod string) *WorkloadWrapper {
	b.last().Requests[r] = resources.MustParse(r, perPod)
	return b
}

// Requests replaces the pod set's per-pod requests (see Req).
func (b *WorkloadWrapper) Requests(v resources.Vector) *WorkloadWrapper {
	b.last().Requests = v.Clone()
	return b
}

// CPU and GPUs set the per-pod CPU cores and whole GPUs (nvidia.com/gpu).
// ContainerGPU sets the most GPU units one container of the last pod set asks for.
func (b *WorkloadWrapper) ContainerGPU(n int64) *WorkloadWrapper { b.last().ContainerGPU = n; return b }

func (b *WorkloadWrapper) CPU(cores int64) *WorkloadWrapper {
	b.last().Requests[resources.CPU] = resources.Amount(cores * 1000)
	return b
}
func (b *WorkloadWrapper) GPUs(n int64) *WorkloadWrapper {
	b.last().Requests[resources.NvidiaGPU] = resources.Amount(n)
	return b
}

// NodeSelector adds a node selector label to the pod set.
func (b *WorkloadWrapper) NodeSelector(k, v string) *WorkloadWrapper {
	ps := b.last()
	if ps.NodeSelector == nil {
		ps.NodeSelector = map[string]string{}
	}
	ps.NodeSelector[k] = v
	return b
}

// Toleration adds a toleration key=value for taints of effect (every effect when "").
func (b *WorkloadWrapper) Toleration(key, value string, effect corev1.TaintEffect) *WorkloadWrapper {
	ps := b.last()
	ps.Tolerations = append(ps.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: effect})
	return b
}

// Affinity adds a required node affinity term of one expression; terms are ORed.
func (b *WorkloadWrapper) Affinity(key string, op corev1.NodeSelectorOperator, values ...string) *WorkloadWrapper {
	ps := b.last()
	if ps.Affinity == nil {
		ps.Affinity = &corev1.NodeSelector{}
	}
	ps.Affinity.NodeSelectorTerms = append(ps.Affinity.NodeSelectorTerms, corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}})
	return b
}

// RequiredTopology and PreferredTopology bind the pod set to one domain of level.
func (b *WorkloadWrapper) RequiredTopology(level string) *WorkloadWrapper {
	b.last().Topology = &api.TopologyRequest{Mode: api.TopologyRequired, Level: level}
	return b
}
func (b *WorkloadWrapper) PreferredTopology(level string) *WorkloadWrapper {
	b.last().Topology = &api.TopologyRequest{Mode: api.TopologyPreferred, Level: level}
	return b
}

// Obj returns a copy of the workload; later calls on the builder do not change it.
func (b *WorkloadWrapper) Obj() *api.Workload {
	b.last()
	w := b.w
	w.PodSets = make([]api.PodSet, len(b.w.PodSets))
	for i, ps := range b.w.PodSets {
		ps.Requests = ps.Requests.Clone()
		w.PodSets[i] = ps
	}
	return &w
}
