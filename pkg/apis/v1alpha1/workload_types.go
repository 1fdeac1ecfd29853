package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Workload condition types, as in Kueue.
const (
	WorkloadQuotaReserved = "QuotaReserved"
	WorkloadAdmitted      = "Admitted"
	WorkloadEvicted       = "Evicted"
	WorkloadFinished      = "Finished"
)

// WorkloadState is the one-word summary shown by `kubectl get workloads`.
// +kubebuilder:validation:Enum=Pending;QuotaReserved;Admitted;Evicted;Finished
type WorkloadState string

const (
	StatePending       WorkloadState = "Pending"
	StateQuotaReserved WorkloadState = "QuotaReserved"
	StateAdmitted      WorkloadState = "Admitted"
	StateEvicted       WorkloadState = "Evicted"
	StateFinished      WorkloadState = "Finished"
)

// PodSetTopologyRequest mirrors Kueue's podset topology annotations as fields, with
// the names of Kueue's v1beta2 PodSetTopologyRequest.
// +kubebuilder:validation:XValidation:rule="[has(self.required), has(self.preferred), has(self.unconstrained) && self.unconstrained].filter(x, x).size() <= 1",message="set at most one of required, preferred and unconstrained"
// +kubebuilder:validation:XValidation:rule="!has(self.podsetSliceRequiredTopologyConstraints) || (!has(self.podSetSliceRequiredTopology) && !has(self.podSetSliceSize))",message="podsetSliceRequiredTopologyConstraints excludes podSetSliceRequiredTopology and podSetSliceSize"
// +kubebuilder:validation:XValidation:rule="!has(self.podSetGroupName) || has(self.required) || has(self.preferred)",message="podSetGroupName needs required or preferred"
type PodSetTopologyRequest struct {
	// Required is a topology level (node-label key) all pods of the set must share.
	// +optional
	Required *string `json:"required,omitempty"`
	// Preferred is a level the pods should share when possible.
	// +optional
	Preferred *string `json:"preferred,omitempty"`
	// PodSetSliceRequiredTopology: every PodSetSliceSize pods share one domain of it.
	// +optional
	PodSetSliceRequiredTopology *string `json:"podSetSliceRequiredTopology,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	PodSetSliceSize *int32 `json:"podSetSliceSize,omitempty"`
	// Unconstrained (Kueue's podset-unconstrained-topology): topology-aware placement
	// with no common domain; pods fill the tightest gaps first.
	// +optional
	Unconstrained *bool `json:"unconstrained,omitempty"`
	// PodSetGroupName (Kueue's podset-group-name): the pod sets of a workload with the
	// same group name share one domain of their required or preferred level.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	PodSetGroupName *string `json:"podSetGroupName,omitempty"`
	// PodsetSliceRequiredTopologyConstraints (Kueue's
	// podset-slice-required-topology-constraints): slice layers from the coarsest to
	// the finest, each size dividing the one above. Excludes PodSetSliceRequiredTopology
	// and PodSetSliceSize.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=atomic
	// +optional
	PodsetSliceRequiredTopologyConstraints []PodsetSliceRequiredTopologyConstraint `json:"podsetSliceRequiredTopologyConstraints,omitempty"`
	// HighestTierAllowed (Volcano networkTopology's highestTierAllowed, or its
	// highestTierName resolved to a tier): the pods share one domain of the Topology's
	// tiers, counted from the narrowest (1), the narrowest that holds them, up to this
	// tier; with required the gang waits when none does, with preferred it then places
	// without a common domain.
	// +kubebuilder:validation:Minimum=1
	// +optional
	HighestTierAllowed *int32 `json:"highestTierAllowed,omitempty"`
}

// PodsetSliceRequiredTopologyConstraint is one slice layer: every Size pods share one
// domain of Topology.
type PodsetSliceRequiredTopologyConstraint struct {
	// Topology is the level (node-label key).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Topology string `json:"topology"`
	// Size is the number of pods per domain of the level.
	// +kubebuilder:validation:Minimum=1
	Size int32 `json:"size"`
}

// PodSet is a group of identical pods. Kueue embeds a full pod template; Gantry keeps
// the fields scheduling reads, which keeps the CRD small and the object readable.
// +kubebuilder:validation:XValidation:rule="!has(self.minCount) || self.minCount <= self.count",message="minCount must not exceed count"
type PodSet struct {
	// Name is unique within the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Count of pods in the set.
	// +kubebuilder:validation:Minimum=1
	Count int32 `json:"count"`
	// MinCount pods of the set form the gang; unset means Count.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinCount *int32 `json:"minCount,omitempty"`
	// Requests of one pod (containers summed, init containers as the scheduler counts them).
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// ContainerGPU is the most nvidia.com/gpu or nvidia.com/gpu.shared units one container
	// of a pod asks for: a shared GPU may refuse more than one replica per container.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ContainerGPU int64 `json:"containerGPU,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// NodeAffinity is the pods' required node affinity.
	// +optional
	NodeAffinity *corev1.NodeSelector `json:"nodeAffinity,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	TopologyRequest *PodSetTopologyRequest `json:"topologyRequest,omitempty"`
}

// WorkloadOwner names the job object the workload was made from.
type WorkloadOwner struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
}

// WorkloadSpec is what is asked: pod sets that start together, through a queue.
type WorkloadSpec struct {
	// QueueName is the LocalQueue in the workload's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	QueueName string `json:"queueName"`
	// PodSets are started together as one gang.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	PodSets []PodSet `json:"podSets"`
	// PriorityClassName names a WorkloadPriorityClass or a pod PriorityClass.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Priority is resolved from PriorityClassName by the controller.
	// +optional
	Priority *int32 `json:"priority,omitempty"`
	// MaximumExecutionTimeSeconds bounds the run time (used for reservations).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaximumExecutionTimeSeconds *int32 `json:"maximumExecutionTimeSeconds,omitempty"`
	// Owner is the job object this workload represents.
	// +optional
	Owner *WorkloadOwner `json:"owner,omitempty"`
}

// PodSetAssignment is the flavor chosen per resource for one pod set.
type PodSetAssignment struct {
	Name string `json:"name"`
	// Flavors maps each resource to the ResourceFlavor charged for it.
	// +optional
	Flavors map[corev1.ResourceName]string `json:"flavors,omitempty"`
	// ResourceUsage is the quota charged for the whole pod set.
	// +optional
	ResourceUsage corev1.ResourceList `json:"resourceUsage,omitempty"`
	// +optional
	Count *int32 `json:"count,omitempty"`
}

// PodPlacement is where one pod of the gang goes, with its devices.
type PodPlacement struct {
	// PodSet and Index identify the pod inside the workload.
	PodSet string `json:"podSet"`
	Index  int32  `json:"index"`
	// Pod is the bound pod's name once known.
	// +optional
	Pod  string `json:"pod,omitempty"`
	Node string `json:"node"`
	// Devices are stable device IDs ("GPU-0", "GPU-3/mig-1g.10gb@4", "GPU-2/replica-1").
	// +optional
	Devices []string `json:"devices,omitempty"`
}

// Admission is the decision that admitted the workload.
type Admission struct {
	ClusterQueue      string             `json:"clusterQueue"`
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments,omitempty"`
	// Placements are the planned pods, each with node and devices.
	// +optional
	Placements []PodPlacement `json:"placements,omitempty"`
	// Sequence is the admission's place in the order the scheduler decided (increasing
	// over a controller's admissions). The admissions of one pass are written
	// concurrently, so the order the API server commits them in is not that order.
	// +optional
	Sequence int64 `json:"sequence,omitempty"`
}

// RequeueState counts evictions and says when the workload may be tried again.
type RequeueState struct {
	// +optional
	Count *int32 `json:"count,omitempty"`
	// +optional
	RequeueAt *metav1.Time `json:"requeueAt,omitempty"`
}

// WorkloadStatus is what Gantry decided and why.
type WorkloadStatus struct {
	// State summarises the conditions for printing.
	// +optional
	State WorkloadState `json:"state,omitempty"`
	// Reason is the stable reason code of the latest decision (e.g. "WaitingForQuota",
	// "QuotaFitsClusterDoesNot", "Preempted").
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains Reason in words.
	// +optional
	Message string `json:"message,omitempty"`
	// Layer is the layer holding a pending workload: "admission" (quota, queues) or
	// "placement" (nodes and devices).
	// +optional
	Layer string `json:"layer,omitempty"`
	// Details is the evidence behind Reason, one line per flavor, resource or node
	// dimension tried, as `gantry explain` prints it.
	// +optional
	// +listType=atomic
	Details []string `json:"details,omitempty"`
	// Remedy is the cheapest change that would admit the workload, when one is known
	// (more quota in one flavor, a node shape, a queue to un-hold).
	// +optional
	Remedy string `json:"remedy,omitempty"`
	// Conditions: QuotaReserved, Admitted, Evicted, Finished.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Admission *Admission `json:"admission,omitempty"`
	// Position in its ClusterQueue's pending order (0 = next); unset when not pending.
	// +optional
	Position *int32 `json:"position,omitempty"`
	// ETA is the estimated start time, when one is known.
	// +optional
	ETA *metav1.Time `json:"eta,omitempty"`
	// ETABasis says what the ETA rests on: a backfill reservation, or the expected ends
	// of the running workloads of the cohort tree (quota).
	// +optional
	ETABasis string `json:"etaBasis,omitempty"`
	// +optional
	RequeueState *RequeueState `json:"requeueState,omitempty"`
	// AdmissionChecks are the states of the ClusterQueue's admission checks while the
	// workload's quota is reserved (admissioncheck_types.go).
	// +optional
	// +listType=map
	// +listMapKey=name
	AdmissionChecks []AdmissionCheckState `json:"admissionChecks,omitempty"`
	// QuotaReservation is the quota held, without a placement, while the ClusterQueue's
	// admission checks run (admissioncheck_types.go). It is not an admission: the job
	// stays suspended and nothing is bound until status.admission is written.
	// +optional
	QuotaReservation *QuotaReservation `json:"quotaReservation,omitempty"`
}

// Workload is one job as Gantry schedules it: a gang of pod sets in a queue.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wl
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=".spec.queueName"
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=".status.state"
// +kubebuilder:printcolumn:name="Layer",type=string,JSONPath=".status.layer"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=".status.reason"
// +kubebuilder:printcolumn:name="Position",type=integer,JSONPath=".status.position"
// +kubebuilder:printcolumn:name="ClusterQueue",type=string,JSONPath=".status.admission.clusterQueue",priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=".status.message",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type Workload struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WorkloadSpec   `json:"spec,omitempty"`
	Status WorkloadStatus `json:"status,omitempty"`
}

// WorkloadList is a list of Workloads.
// +kubebuilder:object:root=true
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workload `json:"items"`
}
