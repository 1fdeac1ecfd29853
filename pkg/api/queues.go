package api

import (
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceFlavor is a kind of node capacity (Kueue's ResourceFlavor): the nodes that carry
// NodeLabels, with NodeTaints that pods must tolerate unless Tolerations are added.
type ResourceFlavor struct {
	Meta
	NodeLabels   map[string]string
	NodeTaints   []corev1.Taint
	Tolerations  []corev1.Toleration
	TopologyName string // Topology object used for topology-aware placement, if any
}

// QueueingStrategy orders a ClusterQueue's pending workloads.
type QueueingStrategy string

const (
	// StrictFIFO: the head blocks the queue until it is admitted.
	StrictFIFO QueueingStrategy = "StrictFIFO"
	// BestEffortFIFO: an inadmissible head is set aside and the next one is tried.
	BestEffortFIFO QueueingStrategy = "BestEffortFIFO"
)

// StopPolicy holds a queue.
type StopPolicy string

const (
	StopNone         StopPolicy = "None"
	StopHold         StopPolicy = "Hold"         // admit nothing new
	StopHoldAndDrain StopPolicy = "HoldAndDrain" // admit nothing new and evict admitted workloads
)

// ResourceQuota is the quota of one resource in one flavor. A nil limit means "no limit".
type ResourceQuota struct {
	Name           resources.Name
	Nominal        resources.Amount
	BorrowingLimit *resources.Amount
	LendingLimit   *resources.Amount
}

// FlavorQuotas is one flavor's quotas inside a resource group.
type FlavorQuotas struct {
	Name      string // ResourceFlavor name
	Resources []ResourceQuota
}

// ResourceGroup covers a set of resources that are assigned one flavor together, with the
// flavors tried in the listed order.
type ResourceGroup struct {
	CoveredResources []resources.Name
	Flavors          []FlavorQuotas
}

// PreemptionPolicy values, as in Kueue.
type PreemptionPolicy string

const (
	PreemptNever                     PreemptionPolicy = "Never"
	PreemptLowerPriority             PreemptionPolicy = "LowerPriority"
	PreemptLowerOrNewerEqualPriority PreemptionPolicy = "LowerOrNewerEqualPriority"
	PreemptAny                       PreemptionPolicy = "Any"
)

// BorrowWithinCohort lets a borrowing workload preempt in the cohort.
type BorrowWithinCohort struct {
	Policy               PreemptionPolicy // Never or LowerPriority
	MaxPriorityThreshold *int32
}

// Preemption is a ClusterQueue's preemption configuration.
type Preemption struct {
	WithinClusterQueue  PreemptionPolicy // Never, LowerPriority, LowerOrNewerEqualPriority
	ReclaimWithinCohort PreemptionPolicy // Never, LowerPriority, Any
	BorrowWithinCohort  BorrowWithinCohort
}

// FungibilityPolicy says whether a flavor search stops or goes on.
type FungibilityPolicy string

const (
	MayStopSearch FungibilityPolicy = "MayStopSearch"
	TryNextFlavor FungibilityPolicy = "TryNextFlavor"
)

// FungibilityPreference orders two flavors the search went past (Kueue's
// flavorFungibility.preference).
type FungibilityPreference string

const (
	// BorrowingOverPreemption (Kueue's default, also when empty): a flavor that fits,
	// even by borrowing, beats one that needs preemption; between equal kinds the one
	// borrowing from lower in the cohort tree wins.
	BorrowingOverPreemption FungibilityPreference = "BorrowingOverPreemption"
	// PreemptionOverBorrowing: the flavor borrowing from lower in the cohort tree wins
	// (not borrowing at all, after its preemptions, is best); between equal borrowing
	// the one that fits beats reclaiming, which beats preempting in the queue.
	PreemptionOverBorrowing FungibilityPreference = "PreemptionOverBorrowing"
)

// FlavorFungibility is Kueue's flavorFungibility.
type FlavorFungibility struct {
	WhenCanBorrow  FungibilityPolicy // default MayStopSearch
	WhenCanPreempt FungibilityPolicy // default TryNextFlavor
	// Preference matters only when both policies are TryNextFlavor (Kueue refuses it
	// otherwise); empty means BorrowingOverPreemption.
	Preference FungibilityPreference
}

// FairSharing holds the weight of a ClusterQueue or Cohort, in thousandths (weight 1 = 1000).
type FairSharing struct {
	WeightMilli int64
}

// AdmissionFairSharing orders workloads of one ClusterQueue across its LocalQueues by
// their decayed historical usage.
type AdmissionFairSharing struct {
	Enabled  bool
	HalfLife Duration
}

// ClusterQueue is a pool of quota (Kueue's ClusterQueue).
type ClusterQueue struct {
	Meta
	Cohort               string
	NamespaceSelector    *metav1.LabelSelector // nil selects nothing is NOT Kueue's rule: nil selects all
	QueueingStrategy     QueueingStrategy
	ResourceGroups       []ResourceGroup
	Preemption           Preemption
	FlavorFungibility    FlavorFungibility
	FairSharing          FairSharing
	AdmissionFairSharing AdmissionFairSharing
	StopPolicy           StopPolicy

	// Gantry extensions (annotations gantry.dev/...; see docs/admission.md).
	Placement        PlacementPolicy
	DisruptionBudget DisruptionBudget
}

// PlacementPolicy selects the scoring used for a queue's workloads; empty means the
// cluster default. Weights are integers.
type PlacementPolicy struct {
	Scorers []WeightedScorer
}

// WeightedScorer is one scoring function ("binpack", "spread", "fragmentation",
// "whole-gpu-islands") with an integer weight.
type WeightedScorer struct {
	Name   string
	Weight int64
}

// DisruptionBudget caps how many GPUs of a queue's workloads may be preempted per window.
type DisruptionBudget struct {
	MaxGPUs int64    // 0 means unlimited
	Window  Duration // e.g. 1h
}

// Cohort is a node of the cohort tree (Kueue's Cohort object); ClusterQueues are leaves.
type Cohort struct {
	Meta
	Parent         string
	ResourceGroups []ResourceGroup // quota the cohort itself contributes
	FairSharing    FairSharing
}

// LocalQueue is a namespaced queue pointing at a ClusterQueue.
type LocalQueue struct {
	Meta
	ClusterQueue string
	StopPolicy   StopPolicy
	FairSharing  FairSharing // weight for admission fair sharing
}

// PriorityClassKind says where a priority class came from.
type PriorityClassKind string

const (
	// WorkloadPriority is kueue.x-k8s.io WorkloadPriorityClass.
	WorkloadPriority PriorityClassKind = "WorkloadPriorityClass"
	// PodPriority is scheduling.k8s.io PriorityClass.
	PodPriority PriorityClassKind = "PriorityClass"
)

// PriorityClass is a named priority value.
type PriorityClass struct {
	Meta
	Kind          PriorityClassKind
	Value         int32
	GlobalDefault bool // PodPriority only
	// PreemptionPolicy of a pod PriorityClass ("Never" means it never preempts).
	PreemptionPolicy string
}

// Topology is an ordered list of node-label levels, broadest first (e.g. block, rack,
// hostname), from Kueue's Topology or Volcano's HyperNode tiers.
type Topology struct {
	Meta
	Levels []string
}

// Namespace is a v1 Namespace, for namespaceSelector matching.
type Namespace struct {
	Meta
}
