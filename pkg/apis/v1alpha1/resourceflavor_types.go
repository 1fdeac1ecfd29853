package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceFlavorSpec is Kueue's ResourceFlavor spec: which nodes a flavor stands for.
type ResourceFlavorSpec struct {
	// NodeLabels select the nodes of this flavor; pods admitted with it get them as a
	// node selector.
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// NodeTaints are taints the flavor's nodes carry; workloads must tolerate them.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	NodeTaints []corev1.Taint `json:"nodeTaints,omitempty"`
	// Tolerations are added to pods admitted with this flavor.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// TopologyName names the Topology used for topology-aware placement.
	// +optional
	TopologyName *string `json:"topologyName,omitempty"`
}

// ResourceFlavor is a kind of node capacity.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=flavor
type ResourceFlavor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ResourceFlavorSpec `json:"spec,omitempty"`
}

// ResourceFlavorList is a list of ResourceFlavors.
// +kubebuilder:object:root=true
type ResourceFlavorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceFlavor `json:"items"`
}
