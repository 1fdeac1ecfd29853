package plan

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Evidence is what a rejection rests on, as the layers found it: admission's flavor
// assignment, placement's diagnosis and the engine's own facts (victims, reservation
// holds, flavors tried). Nothing in it is made for people, except the few messages a
// layer gives as text; Rejection.Explain renders it at the edge.
//
// Which fields are set depends on the reason (each field says for which). The engine
// makes one Evidence per decision and shares it between the workloads of an
// equivalence class, so it is never changed once made.
type Evidence struct {
	// Message is a layer's own words where it gives nothing typed: admission's queue
	// resolution (QueueMissing, ClusterQueueMissing, NamespaceNotSelected) and stop
	// policies (QueueHeld).
	Message string
	// Unresolved is a LocalQueue that names no ClusterQueue (QueueMissing, for a
	// workload handed to the engine without one).
	Unresolved *LocalQueueRef
	// MaxAttempts is the per-cycle attempt cap the workload was beyond (NotTried).
	MaxAttempts int
	// PreemptedBy is the workload's preemptor, which still waits for its victims
	// (HeldForPreemptor).
	PreemptedBy api.WorkloadID
	// Victim is a quota victim the engine would not preempt (PreemptionWouldCycle,
	// WaitingForPreemption).
	Victim *UnusableVictim
	// Victims are the workloads noticed for this one in this cycle
	// (WaitingForPreemption).
	Victims []api.WorkloadID
	// Quota is admission's flavor assignment: per pod set, every flavor tried with its
	// mode, code and per-resource reasons (the admission codes, WaitingForPreemption
	// while quota victims leave).
	Quota *admission.Assignment
	// Search is admission's victim search when it found no victims.
	Search *admission.PreemptionResult
	// Without are the quota victims the nodes were checked without; Place says why the
	// gang still does not fit (QuotaFitsClusterDoesNot).
	Without []api.WorkloadID
	// Place is why the gang does not go on the nodes (QuotaFitsClusterDoesNot,
	// WaitingForPreemption for room on the nodes, BlockedByReservation, AdmitFailed).
	Place *PlaceFailure
	// Fallbacks are the other flavors tried after Place, in order.
	Fallbacks []Fallback
	// NoStart is set when a reservation was looked for and the gang fit at no known end
	// of the running workloads (QuotaFitsClusterDoesNot): the gang was placed on the
	// cluster as each end would leave it, pod by pod as the scores send them.
	NoStart bool
	// Backoff is the requeue backoff after failures (BackoffAfterFailure,
	// RequeuingLimitExceeded).
	Backoff *Backoff
	// Holding is the quota the cycle held for this workload, which needs preemption and
	// has no victims, in a ClusterQueue that cannot always reclaim (HoldsQuota).
	Holding []admission.FlavorAmount
	// HeldFor are the workloads the cycle holds quota for (preemptors, whose victims
	// count as gone, and HoldsQuota heads), which leave too little for this one
	// (QuotaHeldInCycle).
	HeldFor []api.WorkloadID
}

// LocalQueueRef names a LocalQueue.
type LocalQueueRef struct {
	Namespace, Name string
}

// UnusableVictim is a victim admission chose that the engine does not preempt.
type UnusableVictim struct {
	Workload api.WorkloadID
	Why      VictimState
}

// VictimState is why a victim cannot be preempted now.
type VictimState int8

const (
	// VictimPreemptedThis: the victim preempted this workload before.
	VictimPreemptedThis VictimState = iota + 1
	// VictimPreemptedBefore: this workload preempted the victim before, and it started
	// again.
	VictimPreemptedBefore
	// VictimLeaving: the victim is already leaving (noticed, evicted or admitted anew).
	VictimLeaving
)

// PlaceFailure is why a gang did not go on the nodes: a code and what backs it (at most
// one of the fields after Code).
type PlaceFailure struct {
	Code Reason
	// Diagnosis is placement's account per node and dimension (NoNodeFits,
	// GangDoesNotFit, TopologyUnsatisfied, InvalidWorkload).
	Diagnosis *placement.Diagnosis
	// Holds is how many reservations ahead of the workload held GPUs while it was
	// placed; placement then gives no per-node diagnosis.
	Holds int
	// NeedGPU is the gang's GPU need at once and FreeGPU the whole cluster's free GPU,
	// in milli-GPU (NotEnoughFreeGPU).
	NeedGPU, FreeGPU resources.MilliGPU
	// Room is the pod set the free whole GPUs cannot host (NoRoomForGang).
	Room *GangRoom
	// Reserved is a node reserved for an earlier workload that this one would not leave
	// in time (BlockedByReservation, node-level reservations).
	Reserved *ReservedNode
	// Message is a layer's own words: placement's per-GPU reservation check
	// (BlockedByReservation), an error (AdmitFailed, VictimNotBound), or the account of a
	// placer that gives no diagnosis.
	Message string
}

// GangRoom is pods of GPUs whole GPUs each, of which the free GPUs could host Hostable.
type GangRoom struct {
	Pods, GPUs, Hostable int64
}

// ReservedNode is a node reserved from a later time than the workload would end.
type ReservedNode struct {
	Node string
	// In is how long after the cycle the reservation starts.
	In time.Duration
	// Runtime is the workload's known runtime; 0 means unknown.
	Runtime time.Duration
}

// Backoff is where a workload evicted by failures stands in its requeue backoff.
type Backoff struct {
	// Failures is how many failures evicted it; EvictedAt is when the last did.
	Failures  int
	EvictedAt time.Time
	// RetryAt is when the backoff is over (BackoffAfterFailure).
	RetryAt time.Time
	// Limit is the requeue limit Failures went past (RequeuingLimitExceeded); 0 while
	// within it.
	Limit int
}

// Fallback is one more try with the flavors that did not fit the nodes ruled out: either
// admission found nothing else (Quota), or it chose Flavors and they did not fit either
// (Place).
type Fallback struct {
	// Without are the flavors ruled out for this try.
	Without []string
	// Quota is admission's answer when it refused the rest.
	Quota *admission.Assignment
	// Flavors are the flavors admission chose instead (those with node labels).
	Flavors []string
	Place   *PlaceFailure
}
