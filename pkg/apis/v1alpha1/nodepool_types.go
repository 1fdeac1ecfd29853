package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GPUSharing says how a pool's GPUs are offered (mirrors devices.Sharing).
type GPUSharing struct {
	// Mode: exclusive, mig, time-slicing, mps or fractional.
	// +kubebuilder:validation:Enum=exclusive;mig;time-slicing;mps;fractional
	// +kubebuilder:default=exclusive
	Mode string `json:"mode,omitempty"`
	// MIGStrategy of the device plugin: single or mixed.
	// +kubebuilder:validation:Enum=single;mixed
	// +optional
	MIGStrategy string `json:"migStrategy,omitempty"`
	// Layout names a mig-parted style layout (all-disabled, all-1g.10gb, all-balanced)
	// or "custom".
	// +optional
	Layout string `json:"layout,omitempty"`
	// CustomProfiles lists, per GPU, the MIG profiles to create for layout "custom"; a
	// single entry applies to every GPU.
	// +optional
	CustomProfiles [][]string `json:"customProfiles,omitempty"`
	// Replicas per GPU for time-slicing and MPS.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int `json:"replicas,omitempty"`
	// RenameByDefault advertises nvidia.com/gpu.shared instead of nvidia.com/gpu.
	// +optional
	RenameByDefault bool `json:"renameByDefault,omitempty"`
	// MPSMemoryLimit per MPS client, a quantity such as "20Gi".
	// +optional
	MPSMemoryLimit string `json:"mpsMemoryLimit,omitempty"`
}

// NodePoolGPU describes the GPUs of every node of a pool.
type NodePoolGPU struct {
	// Model is any GPU name Gantry knows: a GFD product ("NVIDIA-H100-80GB-HBM3"), a
	// canonical ID ("H100-SXM5-80GB") or a short name ("H100").
	Model string `json:"model"`
	// PerNode is the number of GPUs in each node.
	// +kubebuilder:validation:Minimum=0
	PerNode int `json:"perNode"`
	// NVLinkDomainSize splits a node's GPUs into NVLink domains of this size; 0 = one.
	// +optional
	NVLinkDomainSize int `json:"nvlinkDomainSize,omitempty"`
	// +optional
	Sharing *GPUSharing `json:"sharing,omitempty"`
}

// NodePoolTopologyLevel gives node i of the pool the label Key with value
// "<Prefix><i / NodesPerDomain>".
type NodePoolTopologyLevel struct {
	Key string `json:"key"`
	// +kubebuilder:validation:Minimum=1
	NodesPerDomain int `json:"nodesPerDomain"`
	// +optional
	Prefix string `json:"prefix,omitempty"`
}

// NodePoolSpec is a compact description of Count identical nodes.
type NodePoolSpec struct {
	// +kubebuilder:validation:Minimum=0
	Count int `json:"count"`
	// +optional
	GPU *NodePoolGPU `json:"gpu,omitempty"`
	// CPU per node, a quantity such as "192".
	CPU string `json:"cpu"`
	// Memory per node, a quantity such as "2Ti".
	Memory string `json:"memory"`
	// MaxPods per node; 0 means 110.
	// +optional
	MaxPods int64 `json:"maxPods,omitempty"`
	// ExtraResources per node, e.g. {"rdma/ib": "8"}.
	// +optional
	ExtraResources map[string]string `json:"extraResources,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// CapacityType: on-demand, spot or reserved.
	// +kubebuilder:validation:Enum=on-demand;spot;reserved
	// +optional
	CapacityType string `json:"capacityType,omitempty"`
	// Topology labels given to the nodes, broadest first.
	// +optional
	Topology []NodePoolTopologyLevel `json:"topology,omitempty"`
}

// NodePool is Gantry's compact node kind.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Count",type=integer,JSONPath=".spec.count"
// +kubebuilder:printcolumn:name="GPU",type=string,JSONPath=".spec.gpu.model"
// +kubebuilder:printcolumn:name="PerNode",type=integer,JSONPath=".spec.gpu.perNode"
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NodePoolSpec `json:"spec,omitempty"`
}

// NodePoolList is a list of NodePools.
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}
