package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TopologyLevel is one level of a topology, named by the node label that holds it.
type TopologyLevel struct {
	// +kubebuilder:validation:MinLength=1
	NodeLabel string `json:"nodeLabel"`
}

// TopologySpec lists levels from the broadest (e.g. block) to the narrowest (hostname).
type TopologySpec struct {
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Levels []TopologyLevel `json:"levels"`
}

// Topology is Kueue's Topology: the hierarchy of node-label domains.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
type Topology struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TopologySpec `json:"spec,omitempty"`
}

// TopologyList is a list of Topologies.
// +kubebuilder:object:root=true
type TopologyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Topology `json:"items"`
}
