package testing

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// NodeWrapper builds a cluster.Node: on-demand, ready, 64 CPUs, 512Gi memory, 110 pods
// and no GPUs unless GPUs is called.
type NodeWrapper struct {
	n        cluster.Node
	gpus     *DevicesWrapper
	cpu, mem string
}

// MakeNode starts a node labelled with its hostname.
func MakeNode(name string) *NodeWrapper {
	return &NodeWrapper{
		n: cluster.Node{Name: name, Ready: true, CapacityType: api.CapacityOnDemand,
			Labels: map[string]string{cluster.LabelHostname: name}},
		gpus: MakeDevices("", 0),
		cpu:  "64", mem: "512Gi",
	}
}

// GPUs gives the node count GPUs of model, whole unless MIG or Sharing says otherwise.
func (w *NodeWrapper) GPUs(model string, count int) *NodeWrapper {
	w.gpus.model, w.gpus.count = model, count
	return w
}

// MIG partitions the GPUs with a named layout (mixed strategy).
func (w *NodeWrapper) MIG(layout string) *NodeWrapper { w.gpus.MIG(devices.MIGMixed, layout); return w }

// Sharing sets the GPUs' sharing mode.
func (w *NodeWrapper) Sharing(s devices.Sharing) *NodeWrapper { w.gpus.Sharing(s); return w }

// Replicate adds per-resource replication entries to the GPUs' sharing (see
// DevicesWrapper.Replicate).
func (w *NodeWrapper) Replicate(entries ...devices.ReplicatedResource) *NodeWrapper {
	w.gpus.Replicate(entries...)
	return w
}

// NVLinkDomainSize splits the GPUs into NVLink domains of n GPUs.
func (w *NodeWrapper) NVLinkDomainSize(n int) *NodeWrapper { w.gpus.NVLink(n); return w }

// CPU and Memory set allocatable quantities ("32", "256Gi").
func (w *NodeWrapper) CPU(q string) *NodeWrapper    { w.cpu = q; return w }
func (w *NodeWrapper) Memory(q string) *NodeWrapper { w.mem = q; return w }

// Label adds a label.
func (w *NodeWrapper) Label(k, v string) *NodeWrapper { w.n.Labels[k] = v; return w }

// Taint adds a taint key=value:effect.
func (w *NodeWrapper) Taint(key, value string, effect corev1.TaintEffect) *NodeWrapper {
	w.n.Taints = append(w.n.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return w
}

// Unschedulable cordons the node; NotReady marks it not ready.
func (w *NodeWrapper) Unschedulable() *NodeWrapper { w.n.Unschedulable = true; return w }
func (w *NodeWrapper) NotReady() *NodeWrapper      { w.n.Ready = false; return w }

// Spot sets the capacity type to spot.
func (w *NodeWrapper) Spot() *NodeWrapper { w.n.CapacityType = api.CapacitySpot; return w }

// Obj builds the node; it panics on a bad quantity, model or sharing.
func (w *NodeWrapper) Obj() cluster.Node {
	n := w.n
	n.Labels = make(map[string]string, len(w.n.Labels))
	for k, v := range w.n.Labels {
		n.Labels[k] = v
	}
	n.Taints = append([]corev1.Taint(nil), w.n.Taints...)
	n.Allocatable = resources.Vector{
		resources.CPU:    resources.MustParse(resources.CPU, w.cpu),
		resources.Memory: resources.MustParse(resources.Memory, w.mem),
		resources.Pods:   110,
	}
	if w.gpus.count > 0 {
		n.Devices = w.gpus.Obj()
	}
	return n
}

// Req builds a per-pod request vector from name/quantity pairs: Req("cpu", "4",
// "nvidia.com/gpu", "8").
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
