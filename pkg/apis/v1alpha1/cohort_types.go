package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CohortSpec is Kueue's Cohort spec: a node of the cohort tree with its own quota.
type CohortSpec struct {
	// ParentName is the parent cohort (Kueue v1beta1's spec.parentName).
	// +optional
	ParentName string `json:"parentName,omitempty"`
	// Parent is the v1alpha1 spelling of ParentName, accepted for older manifests; set
	// at most one of the two.
	// +optional
	Parent string `json:"parent,omitempty"`
	// ResourceGroups is quota the cohort itself contributes to its subtree.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// Cohort is a node of the cohort tree; ClusterQueues are its leaves.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Parent",type=string,JSONPath=".spec.parentName"
type Cohort struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CohortSpec   `json:"spec,omitempty"`
	Status CohortStatus `json:"status,omitempty"`
}

// CohortStatus is the observed state of a cohort.
type CohortStatus struct {
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CohortList is a list of Cohorts.
// +kubebuilder:object:root=true
type CohortList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cohort `json:"items"`
}
