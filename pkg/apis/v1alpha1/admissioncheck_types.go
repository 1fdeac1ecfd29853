package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CheckState is the state of one admission check for one workload, as Kueue names it.
// +kubebuilder:validation:Enum=Pending;Ready;Retry;Rejected
type CheckState string

// AdmissionCheckState is one admission check's state for a workload whose quota is
// reserved (Kueue's Workload status.admissionChecks): the workload is placed only once
// every check is Ready; Retry releases the quota and requeues it after a backoff;
// Rejected deactivates it.
type AdmissionCheckState struct {
	// Name is the AdmissionCheck's name.
	Name string `json:"name"`
	// State is Pending, Ready, Retry or Rejected.
	State CheckState `json:"state"`
	// LastTransitionTime is when State last changed.
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// Message says why, in words (the ProvisioningRequest's condition message).
	// +optional
	Message string `json:"message,omitempty"`
	// RetryCount is how many times the check asked for a retry.
	// +optional
	RetryCount *int32 `json:"retryCount,omitempty"`
	// ProvisioningRequest names the current autoscaling.x-k8s.io/v1 ProvisioningRequest
	// of a ProvisioningRequest check (in the Workload's namespace).
	// +optional
	ProvisioningRequest string `json:"provisioningRequest,omitempty"`
}

// QuotaReservation is the quota a workload holds while its admission checks run: the
// flavors and usage of each pod set, as status.admission records them for an admitted
// workload, without placements.
type QuotaReservation struct {
	ClusterQueue string `json:"clusterQueue"`
	// +optional
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments,omitempty"`
	// ReservedAt is when the quota was reserved.
	ReservedAt metav1.Time `json:"reservedAt"`
}
