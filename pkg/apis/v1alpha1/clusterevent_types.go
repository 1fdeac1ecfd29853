package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// NamedNodePoolSpec is a pool that appears with a NodeAdd event.
type NamedNodePoolSpec struct {
	Name         string `json:"name"`
	NodePoolSpec `json:",inline"`
}

// ClusterEventSpec is something that happens to the cluster at a simulated time.
// Durations are strings such as "40m", "1h30m" or "2d".
type ClusterEventSpec struct {
	// +kubebuilder:validation:Enum=NodeAdd;NodeRemove;NodeFail;NodeRecover;SpotInterruption;SpotReturn;MIGRelayout;QuotaChange
	Type string `json:"type"`
	// At is the offset from the start of the simulation.
	At string `json:"at"`
	// Nodes or Pool select the nodes the event applies to.
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// +optional
	Pool string `json:"pool,omitempty"`
	// AddPool is the pool whose nodes appear (NodeAdd).
	// +optional
	AddPool *NamedNodePoolSpec `json:"addPool,omitempty"`
	// Notice before nodes go away (SpotInterruption).
	// +optional
	Notice string `json:"notice,omitempty"`
	// ReturnAfter: the capacity comes back after this long (SpotInterruption).
	// +optional
	ReturnAfter string `json:"returnAfter,omitempty"`
	// Sharing is the new GPU configuration (MIGRelayout).
	// +optional
	Sharing *GPUSharing `json:"sharing,omitempty"`
	// ReconfigureTime the GPUs are unavailable (MIGRelayout).
	// +optional
	ReconfigureTime string `json:"reconfigureTime,omitempty"`
	// ClusterQueue and ResourceGroups give the new quota (QuotaChange).
	// +optional
	ClusterQueue string `json:"clusterQueue,omitempty"`
	// +optional
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`
}

// ClusterEvent is a simulated cluster event.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=".spec.type"
// +kubebuilder:printcolumn:name="At",type=string,JSONPath=".spec.at"
type ClusterEvent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterEventSpec `json:"spec,omitempty"`
}

// ClusterEventList is a list of ClusterEvents.
// +kubebuilder:object:root=true
type ClusterEventList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterEvent `json:"items"`
}
