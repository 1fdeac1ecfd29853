package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QueueingStrategy orders a ClusterQueue's pending workloads.
// +kubebuilder:validation:Enum=StrictFIFO;BestEffortFIFO
type QueueingStrategy string

// StopPolicy holds a queue.
// +kubebuilder:validation:Enum=None;Hold;HoldAndDrain
type StopPolicy string

// PreemptionPolicy is one of Never, LowerPriority, LowerOrNewerEqualPriority, Any.
// +kubebuilder:validation:Enum=Never;LowerPriority;LowerOrNewerEqualPriority;Any
type PreemptionPolicy string

// BorrowWithinCohortPolicy is Never or LowerPriority.
// +kubebuilder:validation:Enum=Never;LowerPriority
type BorrowWithinCohortPolicy string

// FlavorFungibilityPolicy says whether the flavor search stops: Kueue accepts Borrow /
// Preempt (older) and MayStopSearch (newer) for "stop", TryNextFlavor for "go on".
// +kubebuilder:validation:Enum=Borrow;Preempt;MayStopSearch;TryNextFlavor
type FlavorFungibilityPolicy string

// AdmissionMode selects admission fair sharing inside a ClusterQueue.
// +kubebuilder:validation:Enum=UsageBasedAdmissionFairSharing;NoAdmissionFairSharing
type AdmissionMode string

// ResourceQuota is the quota of one resource in one flavor.
type ResourceQuota struct {
	// Name of the resource, e.g. "nvidia.com/gpu" or "cpu".
	Name corev1.ResourceName `json:"name"`
	// NominalQuota is the amount this queue owns.
	NominalQuota resource.Quantity `json:"nominalQuota"`
	// BorrowingLimit caps what may be borrowed from the cohort above NominalQuota;
	// nil means no limit.
	// +optional
	BorrowingLimit *resource.Quantity `json:"borrowingLimit,omitempty"`
	// LendingLimit caps how much of NominalQuota other queues may borrow; nil means all.
	// +optional
	LendingLimit *resource.Quantity `json:"lendingLimit,omitempty"`
}

// FlavorQuotas lists one flavor's quotas in a resource group.
type FlavorQuotas struct {
	// Name of a ResourceFlavor.
	Name string `json:"name"`
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Resources []ResourceQuota `json:"resources"`
}

// ResourceGroup covers resources that are assigned one flavor together.
type ResourceGroup struct {
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	CoveredResources []corev1.ResourceName `json:"coveredResources"`
	// Flavors are tried in order.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Flavors []FlavorQuotas `json:"flavors"`
}

// BorrowWithinCohort lets a borrowing workload preempt in the cohort.
type BorrowWithinCohort struct {
	// +kubebuilder:default=Never
	Policy BorrowWithinCohortPolicy `json:"policy,omitempty"`
	// +optional
	MaxPriorityThreshold *int32 `json:"maxPriorityThreshold,omitempty"`
}

// ClusterQueuePreemption is Kueue's preemption configuration.
type ClusterQueuePreemption struct {
	// +kubebuilder:default=Never
	ReclaimWithinCohort PreemptionPolicy `json:"reclaimWithinCohort,omitempty"`
	// +optional
	BorrowWithinCohort *BorrowWithinCohort `json:"borrowWithinCohort,omitempty"`
	// +kubebuilder:default=Never
	WithinClusterQueue PreemptionPolicy `json:"withinClusterQueue,omitempty"`
}

// FlavorFungibility says when the flavor search stops.
type FlavorFungibility struct {
	// +kubebuilder:default=Borrow
	WhenCanBorrow FlavorFungibilityPolicy `json:"whenCanBorrow,omitempty"`
	// +kubebuilder:default=TryNextFlavor
	WhenCanPreempt FlavorFungibilityPolicy `json:"whenCanPreempt,omitempty"`
}

// FairSharing holds a weight for fair sharing (a quantity: "1", "2", "500m").
type FairSharing struct {
	// +optional
	Weight *resource.Quantity `json:"weight,omitempty"`
}

// AdmissionScope turns on admission fair sharing inside a ClusterQueue.
type AdmissionScope struct {
	AdmissionMode AdmissionMode `json:"admissionMode"`
}

// AdmissionChecksStrategy is accepted for compatibility with Kueue and otherwise ignored.
type AdmissionChecksStrategy struct {
	AdmissionChecks []AdmissionCheckStrategyRule `json:"admissionChecks,omitempty"`
}

// AdmissionCheckStrategyRule names an admission check and the flavors it applies to.
type AdmissionCheckStrategyRule struct {
	Name      string   `json:"name"`
	OnFlavors []string `json:"onFlavors,omitempty"`
}

// ClusterQueueSpec is Kueue v1beta1's ClusterQueue spec.
type ClusterQueueSpec struct {
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`
	// Cohort names the cohort this queue borrows from and lends to.
	// +optional
	Cohort string `json:"cohort,omitempty"`
	// +kubebuilder:default=BestEffortFIFO
	QueueingStrategy QueueingStrategy `json:"queueingStrategy,omitempty"`
	// NamespaceSelector selects the namespaces whose LocalQueues may use this queue;
	// nil selects every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// +optional
	FlavorFungibility *FlavorFungibility `json:"flavorFungibility,omitempty"`
	// +optional
	Preemption *ClusterQueuePreemption `json:"preemption,omitempty"`
	// +optional
	AdmissionChecks []string `json:"admissionChecks,omitempty"`
	// +optional
	AdmissionChecksStrategy *AdmissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`
	// +kubebuilder:default=None
	StopPolicy *StopPolicy `json:"stopPolicy,omitempty"`
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
	// +optional
	AdmissionScope *AdmissionScope `json:"admissionScope,omitempty"`
}

// ClusterQueueStatus is the observed state Gantry's controller reports.
type ClusterQueueStatus struct {
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads,omitempty"`
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// FlavorsUsage is the quota in use per flavor and resource (Kueue's field).
	// +optional
	FlavorsUsage []FlavorUsage `json:"flavorsUsage,omitempty"`
	// Usage summarises FlavorsUsage against nominal quota for `kubectl get`, e.g.
	// "h100 nvidia.com/gpu 12/16 (4 borrowed)".
	// +optional
	Usage string `json:"usage,omitempty"`
}

// FlavorUsage is the usage of one flavor's resources.
type FlavorUsage struct {
	Name      string          `json:"name"`
	Resources []ResourceUsage `json:"resources"`
}

// ResourceUsage is the usage of one resource: Total in use, of which Borrowed is
// above the nominal quota.
type ResourceUsage struct {
	Name     corev1.ResourceName `json:"name"`
	Total    resource.Quantity   `json:"total"`
	Borrowed resource.Quantity   `json:"borrowed,omitempty"`
}

// ClusterQueue is a pool of quota.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cq
// +kubebuilder:printcolumn:name="Cohort",type=string,JSONPath=".spec.cohort"
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=".spec.queueingStrategy",priority=1
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=".status.pendingWorkloads"
// +kubebuilder:printcolumn:name="Admitted",type=integer,JSONPath=".status.admittedWorkloads"
// +kubebuilder:printcolumn:name="Usage",type=string,JSONPath=".status.usage"
type ClusterQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterQueueSpec   `json:"spec,omitempty"`
	Status ClusterQueueStatus `json:"status,omitempty"`
}

// ClusterQueueList is a list of ClusterQueues.
// +kubebuilder:object:root=true
type ClusterQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterQueue `json:"items"`
}
