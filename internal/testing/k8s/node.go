package k8s

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeWrapper builds a corev1.Node as the kubelet, GPU feature discovery and the device
// plugin report it.
type NodeWrapper struct{ n corev1.Node }

// MakeNode starts a ready node with room for 110 pods, 64 CPUs and 512Gi of memory.
func MakeNode(name string) *NodeWrapper {
	return &NodeWrapper{corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"),
				"pods": resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}}
}

// H100 gives the node count whole H100 GPUs.
func (w *NodeWrapper) H100(count int) *NodeWrapper {
	w.gpus("NVIDIA-H100-80GB-HBM3", count)
	w.n.Status.Capacity["nvidia.com/gpu"] = *resource.NewQuantity(int64(count), resource.DecimalSI)
	return w
}

// A100MIG gives the node count A100-80GB GPUs partitioned all-1g.10gb (mixed strategy).
func (w *NodeWrapper) A100MIG(count int) *NodeWrapper {
	w.gpus("NVIDIA-A100-SXM4-80GB", count)
	w.Label("nvidia.com/mig.capable", "true").Label("nvidia.com/mig.strategy", "mixed").Label("nvidia.com/mig.config", "all-1g.10gb")
	w.n.Status.Capacity["nvidia.com/mig-1g.10gb"] = *resource.NewQuantity(int64(7*count), resource.DecimalSI)
	return w
}

// gpus sets the labels GPU feature discovery puts on a node with count GPUs of product.
func (w *NodeWrapper) gpus(product string, count int) {
	w.Label("nvidia.com/gpu.product", product).Label("nvidia.com/gpu.count", strconv.Itoa(count))
}

// Label adds a label.
func (w *NodeWrapper) Label(k, v string) *NodeWrapper { w.n.Labels[k] = v; return w }

// Obj returns a copy of the node.
func (w *NodeWrapper) Obj() *corev1.Node { return w.n.DeepCopy() }
