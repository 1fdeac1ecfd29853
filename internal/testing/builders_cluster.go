package testing

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// NodeWrapper builds a cluster.Node: 64 CPUs, 512Gi memory, 110 pods, ready, no GPUs.
type NodeWrapper struct {
	n        cluster.Node
	model    string
	gpus     int
	sharing  devices.Sharing
	perNVL   int
	cpu, mem string
}

// MakeNode starts a node builder.
func MakeNode(name string) *NodeWrapper {
	return &NodeWrapper{
		n: cluster.Node{Name: name, Ready: true, CapacityType: api.CapacityOnDemand,
			Labels: map[string]string{cluster.LabelHostname: name}},
		cpu: "64", mem: "512Gi",
	}
}

// GPUs gives the node count exclusive GPUs of model.
func (w *NodeWrapper) GPUs(model string, count int) *NodeWrapper {
	w.model, w.gpus = model, count
	if w.sharing.Mode == "" {
		w.sharing = devices.Sharing{Mode: devices.Exclusive}
	}
	return w
}

// MIG partitions the GPUs with a named layout (mixed strategy).
func (w *NodeWrapper) MIG(layout string) *NodeWrapper {
	w.sharing = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: layout}
	return w
}

// Sharing sets the GPUs' sharing mode.
func (w *NodeWrapper) Sharing(s devices.Sharing) *NodeWrapper { w.sharing = s; return w }

// NVLinkDomainSize splits the GPUs into NVLink domains of n GPUs.
func (w *NodeWrapper) NVLinkDomainSize(n int) *NodeWrapper { w.perNVL = n; return w }

// CPU and Memory set allocatable quantities ("32", "256Gi").
func (w *NodeWrapper) CPU(q string) *NodeWrapper    { w.cpu = q; return w }
func (w *NodeWrapper) Memory(q string) *NodeWrapper { w.mem = q; return w }

// Label adds a label.
func (w *NodeWrapper) Label(k, v string) *NodeWrapper { w.n.Labels[k] = v; return w }

// Taint adds a taint "key=value:Effect".
func (w *NodeWrapper) Taint(key, value string, effect corev1.TaintEffect) *NodeWrapper {
	w.n.Taints = append(w.n.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return w
}

// Unschedulable cordons the node; NotReady marks it not ready.
func (w *NodeWrapper) Unschedulable() *NodeWrapper { w.n.Unschedulable = true; return w }
func (w *NodeWrapper) NotReady() *NodeWrapper      { w.n.Ready = false; return w }

// Spot sets the capacity type to spot.
func (w *NodeWrapper) Spot() *NodeWrapper { w.n.CapacityType = api.CapacitySpot; return w }

// Obj builds the node.
func (w *NodeWrapper) Obj() cluster.Node {
	n := w.n
	n.Allocatable = resources.Vector{
		resources.CPU:    resources.MustParse(resources.CPU, w.cpu),
		resources.Memory: resources.MustParse(resources.Memory, w.mem),
		resources.Pods:   110,
	}
	if w.gpus > 0 {
		m, err := devices.LookupModel(w.model)
		if err != nil {
			panic(err)
		}
		gpus, err := devices.NewGPUs(m, w.gpus, w.sharing, w.perNVL)
		if err != nil {
			panic(fmt.Sprintf("node %s: %v", n.Name, err))
		}
		d, err := devices.NewNodeDevices(gpus)
		if err != nil {
			panic(fmt.Sprintf("node %s: %v", n.Name, err))
		}
		n.Devices = d
	}
	return n
}

// Req builds a per-pod request vector from name/quantity pairs: Req("cpu", "4", "nvidia.com/gpu", "8").
func Req(pairs ...string) resources.Vector {
	if len(pairs)%2 != 0 {
		panic("Req needs name/quantity pairs")
	}
	v := resources.Vector{}
	for k := 0; k < len(pairs); k += 2 {
		n := resources.Name(pairs[k])
		v[n] = resources.MustParse(n, pairs[k+1])
	}
	return v
}

// WorkloadWrapper builds an api.Workload.
type WorkloadWrapper struct{ w api.Workload }

// MakeWorkload starts a workload builder from "namespace/name".
func MakeWorkload(key string) *WorkloadWrapper {
	ns, name := "default", key
	for k := 0; k < len(key); k++ {
		if key[k] == '/' {
			ns, name = key[:k], key[k+1:]
			break
		}
	}
	return &WorkloadWrapper{w: api.Workload{Meta: api.Meta{Namespace: ns, Name: name}}}
}

// PodSet adds a pod set of count identical pods.
func (b *WorkloadWrapper) PodSet(name string, count int32, req resources.Vector) *WorkloadWrapper {
	b.w.PodSets = append(b.w.PodSets, api.PodSet{Name: name, Count: count, Requests: req})
	return b
}

func (b *WorkloadWrapper) last() *api.PodSet { return &b.w.PodSets[len(b.w.PodSets)-1] }

// MinCount sets the last pod set's gang count.
func (b *WorkloadWrapper) MinCount(n int32) *WorkloadWrapper { b.last().MinCount = n; return b }

// NodeSelector adds a selector label to the last pod set.
func (b *WorkloadWrapper) NodeSelector(k, v string) *WorkloadWrapper {
	ps := b.last()
	if ps.NodeSelector == nil {
		ps.NodeSelector = map[string]string{}
	}
	ps.NodeSelector[k] = v
	return b
}

// Toleration adds a toleration to the last pod set.
func (b *WorkloadWrapper) Toleration(t corev1.Toleration) *WorkloadWrapper {
	b.last().Tolerations = append(b.last().Tolerations, t)
	return b
}

// Affinity adds a required node affinity term (one expression) to the last pod set.
func (b *WorkloadWrapper) Affinity(key string, op corev1.NodeSelectorOperator, values ...string) *WorkloadWrapper {
	ps := b.last()
	if ps.Affinity == nil {
		ps.Affinity = &corev1.NodeSelector{}
	}
	ps.Affinity.NodeSelectorTerms = append(ps.Affinity.NodeSelectorTerms, corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}})
	return b
}

// RequiredTopology / PreferredTopology bind the last pod set to one domain of level.
func (b *WorkloadWrapper) RequiredTopology(level string) *WorkloadWrapper {
	b.last().Topology = &api.TopologyRequest{Mode: api.TopologyRequired, Level: level}
	return b
}
func (b *WorkloadWrapper) PreferredTopology(level string) *WorkloadWrapper {
	b.last().Topology = &api.TopologyRequest{Mode: api.TopologyPreferred, Level: level}
	return b
}

// Priority sets the workload's priority; Queue its LocalQueue.
func (b *WorkloadWrapper) Priority(p int32) *WorkloadWrapper { b.w.Priority = p; return b }
func (b *WorkloadWrapper) Queue(q string) *WorkloadWrapper   { b.w.Queue = q; return b }

// Obj returns the workload.
func (b *WorkloadWrapper) Obj() *api.Workload { w := b.w; return &w }
