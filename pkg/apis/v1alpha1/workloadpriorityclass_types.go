package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WorkloadPriorityClass is Kueue's priority class for workloads (independent of pod
// priority). Value and Description sit at the top level, as in Kueue.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Value",type=integer,JSONPath=".value"
type WorkloadPriorityClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Value is the priority; higher runs first.
	Value int32 `json:"value"`
	// +optional
	Description string `json:"description,omitempty"`
}

// WorkloadPriorityClassList is a list of WorkloadPriorityClasses.
// +kubebuilder:object:root=true
type WorkloadPriorityClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadPriorityClass `json:"items"`
}
