package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// LocalQueueSpec is Kueue v1beta1's LocalQueue spec.
type LocalQueueSpec struct {
	// ClusterQueue this namespaced queue submits to.
	// +kubebuilder:validation:MinLength=1
	ClusterQueue string `json:"clusterQueue"`
	// +kubebuilder:default=None
	StopPolicy *StopPolicy `json:"stopPolicy,omitempty"`
	// FairSharing weight of this queue for admission fair sharing.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// LocalQueueStatus is the observed state Gantry's controller reports.
type LocalQueueStatus struct {
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads,omitempty"`
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads,omitempty"`
}

// LocalQueue is a namespaced queue pointing at a ClusterQueue.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=queue;lq
// +kubebuilder:printcolumn:name="ClusterQueue",type=string,JSONPath=".spec.clusterQueue"
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=".status.pendingWorkloads"
// +kubebuilder:printcolumn:name="Admitted",type=integer,JSONPath=".status.admittedWorkloads"
type LocalQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LocalQueueSpec   `json:"spec,omitempty"`
	Status LocalQueueStatus `json:"status,omitempty"`
}

// LocalQueueList is a list of LocalQueues.
// +kubebuilder:object:root=true
type LocalQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalQueue `json:"items"`
}
