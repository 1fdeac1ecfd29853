package plan

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/placement"
)

// Reason is a stable, machine-readable code for why a workload is not admitted: what a
// Rejection carries to the Workload status, events, metrics and `gantry explain`. Every
// code is one constant below. Admission's codes (admission.ReasonCode) and placement's
// (placement.FailureCode) are the layers' own words; they become Reasons at the engine
// boundary through AdmissionReason and PlacementReason, which keep the code's text, so
// a layer's code and its Reason read the same everywhere. Codes never change meaning;
// new ones may be added (with a layer in reasonLayers and a test case for Explain).
type Reason string

// Codes admission decides (quota, flavors, queues), as admission.ReasonCode names them.
const (
	// ReasonQueueMissing: the workload's LocalQueue does not exist or resolves to no
	// ClusterQueue.
	ReasonQueueMissing = Reason(admission.QueueMissing)
	// ReasonClusterQueueMissing: the LocalQueue points at a ClusterQueue that does not exist.
	ReasonClusterQueueMissing = Reason(admission.ClusterQueueMissing)
	// ReasonNamespaceNotSelected: the ClusterQueue's namespaceSelector excludes the namespace.
	ReasonNamespaceNotSelected = Reason(admission.NamespaceNotSelected)
	// ReasonQueueHeld: the ClusterQueue or LocalQueue has a Hold or HoldAndDrain stop policy.
	ReasonQueueHeld = Reason(admission.QueueHeld)
	// ReasonInvalidWorkload: the workload itself cannot be admitted (no pod sets, a
	// non-positive count) or placed (an unparsable GPU request).
	ReasonInvalidWorkload = Reason(admission.InvalidWorkload)
	// ReasonResourceNotCovered: a pod requests a resource no resource group covers.
	ReasonResourceNotCovered = Reason(admission.ResourceNotCovered)
	// ReasonNoFlavorMatches: no flavor's node labels and taints admit a pod set.
	ReasonNoFlavorMatches = Reason(admission.NoFlavorMatches)
	// ReasonExceedsMaxQuota: the request is more than the ClusterQueue can ever get.
	ReasonExceedsMaxQuota = Reason(admission.ExceedsMaxQuota)
	// ReasonWaitingForQuota: the request fits once admitted workloads finish; no
	// preemption is allowed or possible now.
	ReasonWaitingForQuota = Reason(admission.WaitingForQuota)
	// ReasonWaitingForPreemption: victims were noticed (for quota or for room on the
	// nodes); the workload starts once they leave.
	ReasonWaitingForPreemption = Reason(admission.WaitingForPreemption)
	// ReasonBlockedByHead: StrictFIFO queue whose head could not be admitted.
	ReasonBlockedByHead = Reason(admission.BlockedByHead)
	// ReasonInadmissible: set aside after a failed attempt, until something relevant changes.
	ReasonInadmissible = Reason(admission.Inadmissible)
	// ReasonAdmitFailed: placement found room but reserving the quota failed (the quota
	// state moved under the cycle); it is retried next cycle.
	ReasonAdmitFailed = Reason(admission.AdmitFailed)
)

// Codes placement decides (nodes, gangs, topology), as placement.FailureCode names them.
// A Rejection carries them in its PlaceFailure; its own reason says what the engine
// made of the failure (QuotaFitsClusterDoesNot, WaitingForPreemption, ...).
const (
	// ReasonNoNodeFits: no node can take the gang's first unplaced pod.
	ReasonNoNodeFits = Reason(placement.NoNodeFits)
	// ReasonGangDoesNotFit: some nodes fit one pod, but not the whole gang at once.
	ReasonGangDoesNotFit = Reason(placement.GangDoesNotFit)
	// ReasonTopologyUnsatisfied: no topology domain has room for the gang.
	ReasonTopologyUnsatisfied = Reason(placement.TopologyUnsatisfied)
	// ReasonVictimNotBound: a preemption what-if names a victim whose pods are not bound.
	ReasonVictimNotBound = Reason(placement.VictimNotBound)
)

// Codes the engine decides itself, between and around the layers.
const (
	// ReasonQuotaFitsClusterDoesNot: quota admits the workload but no placement of the
	// whole gang exists now (and no preemption or reservation helps).
	ReasonQuotaFitsClusterDoesNot Reason = "QuotaFitsClusterDoesNot"
	// ReasonBlockedByReservation: it would use GPUs or nodes reserved for an earlier
	// workload and does not end before that reservation's ETA.
	ReasonBlockedByReservation Reason = "BlockedByReservation"
	// ReasonNotTried: beyond the engine's MaxAttempts this cycle.
	ReasonNotTried Reason = "NotTried"
	// ReasonPreemptionWouldCycle: the only victims are the workload's own preemptors.
	ReasonPreemptionWouldCycle Reason = "PreemptionWouldCycle"
	// ReasonHeldForPreemptor: the workload was preempted by one that still waits for its
	// victims this cycle, so it does not take back the room it gave up.
	ReasonHeldForPreemptor Reason = "HeldForPreemptor"
	// ReasonNotEnoughFreeGPU: the whole cluster has fewer free GPU units than the gang
	// needs, so placement was not asked (a PlaceFailure code).
	ReasonNotEnoughFreeGPU Reason = "NotEnoughFreeGPU"
	// ReasonNoRoomForGang: the free whole GPUs, node by node, cannot host the gang's
	// pods (a node with f free hosts at most f/g pods of g GPUs), so placement was not
	// asked (a PlaceFailure code).
	ReasonNoRoomForGang Reason = "NoRoomForGang"
	// ReasonBackoffAfterFailure: evicted by a failure, it waits out its requeue backoff.
	ReasonBackoffAfterFailure Reason = "BackoffAfterFailure"
	// ReasonNeverFits: no placement could ever start the workload on the cluster, even
	// with nothing running (the simulator's mark, from engine.NeverFitChecker).
	ReasonNeverFits Reason = "NeverFits"
	// ReasonRequeuingLimitExceeded: evicted by more failures than the requeue policy's
	// limit; not tried again until the workload changes.
	ReasonRequeuingLimitExceeded Reason = "RequeuingLimitExceeded"
	// ReasonHoldsQuota: it needs preemption and has no victims, and its ClusterQueue
	// cannot always reclaim what it lends (reclaimWithinCohort not Any), so the cycle
	// keeps the queue's quota it would use from later heads (Kueue's cycle; tried again
	// every cycle).
	ReasonHoldsQuota Reason = "HoldsQuota"
	// ReasonQuotaHeldInCycle: it fits the quota as it stands, but not once the quota
	// the cycle holds (preemptors' requests, their victims gone; HoldsQuota heads) is
	// counted (Kueue's cycle); tried again next cycle.
	ReasonQuotaHeldInCycle Reason = "QuotaHeldInCycle"
)

// reasonLayers are the layers whose decision each code reports: a Rejection with the
// reason names one of them. WaitingForPreemption is both: victims free quota
// (admission) or room on the nodes (placement).
var reasonLayers = map[Reason][]Layer{
	ReasonQueueMissing:         {LayerAdmission},
	ReasonClusterQueueMissing:  {LayerAdmission},
	ReasonNamespaceNotSelected: {LayerAdmission},
	ReasonQueueHeld:            {LayerAdmission},
	ReasonInvalidWorkload:      {LayerAdmission, LayerPlacement},
	ReasonResourceNotCovered:   {LayerAdmission},
	ReasonNoFlavorMatches:      {LayerAdmission},
	ReasonExceedsMaxQuota:      {LayerAdmission},
	ReasonWaitingForQuota:      {LayerAdmission},
	ReasonWaitingForPreemption: {LayerAdmission, LayerPlacement},
	ReasonBlockedByHead:        {LayerAdmission},
	ReasonInadmissible:         {LayerAdmission},
	ReasonAdmitFailed:          {LayerAdmission},

	ReasonNoNodeFits:          {LayerPlacement},
	ReasonGangDoesNotFit:      {LayerPlacement},
	ReasonTopologyUnsatisfied: {LayerPlacement},
	ReasonVictimNotBound:      {LayerPlacement},

	ReasonQuotaFitsClusterDoesNot: {LayerPlacement},
	ReasonBlockedByReservation:    {LayerPlacement},
	ReasonNotTried:                {LayerAdmission},
	ReasonPreemptionWouldCycle:    {LayerAdmission},
	ReasonHeldForPreemptor:        {LayerAdmission},
	ReasonNotEnoughFreeGPU:        {LayerPlacement},
	ReasonNoRoomForGang:           {LayerPlacement},
	ReasonNeverFits:               {LayerPlacement},
	ReasonBackoffAfterFailure:     {LayerAdmission},
	ReasonRequeuingLimitExceeded:  {LayerAdmission},
	ReasonHoldsQuota:              {LayerAdmission},
	ReasonQuotaHeldInCycle:        {LayerAdmission},
}

// Layers are the layers a rejection with this reason may be held by; nil for a code
// that is not one of the constants.
func (r Reason) Layers() []Layer { return reasonLayers[r] }

// Known reports whether r is one of the constants.
func (r Reason) Known() bool {
	_, ok := reasonLayers[r]
	return ok
}

// Reasons lists every code, sorted.
func Reasons() []Reason {
	out := make([]Reason, 0, len(reasonLayers))
	for r := range reasonLayers {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// AdmissionReason is admission's code as a Reason (the same text; ReasonNone is "").
func AdmissionReason(c admission.ReasonCode) Reason { return Reason(c) }

// PlacementReason is placement's failure code as a Reason (the same text).
func PlacementReason(c placement.FailureCode) Reason { return Reason(c) }
