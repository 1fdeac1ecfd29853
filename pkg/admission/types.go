package admission

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Mode is how well a pod set (or a whole workload) fits quota. The order matters:
// NoFit < Preempt < Borrow < Fit, so the best of several outcomes is the largest.
type Mode int8

const (
	// NoFit: the request cannot be met in this flavor, not even by preempting.
	NoFit Mode = iota
	// Preempt: the request fits only if some admitted workloads are preempted.
	Preempt
	// Borrow: the request fits now, using unused quota borrowed from the cohort.
	Borrow
	// Fit: the request fits within the ClusterQueue's own nominal quota.
	Fit
)

func (m Mode) String() string {
	switch m {
	case NoFit:
		return "NoFit"
	case Preempt:
		return "Preempt"
	case Borrow:
		return "Borrow"
	case Fit:
		return "Fit"
	}
	return fmt.Sprintf("Mode(%d)", int8(m))
}

// ReasonCode is a stable, machine-readable reason why a workload is (not yet) admitted.
// Codes never change meaning; new ones may be added.
type ReasonCode string

const (
	// ReasonNone: nothing blocks the workload at the quota layer.
	ReasonNone ReasonCode = ""
	// QueueMissing: the workload names a LocalQueue that does not exist in its namespace.
	QueueMissing ReasonCode = "QueueMissing"
	// ClusterQueueMissing: the LocalQueue points at a ClusterQueue that does not exist.
	ClusterQueueMissing ReasonCode = "ClusterQueueMissing"
	// NamespaceNotSelected: the ClusterQueue's namespaceSelector excludes the namespace.
	NamespaceNotSelected ReasonCode = "NamespaceNotSelected"
	// QueueHeld: the ClusterQueue or LocalQueue has a Hold or HoldAndDrain stop policy.
	QueueHeld ReasonCode = "QueueHeld"
	// InvalidWorkload: the workload has no pod sets or a non-positive pod count.
	InvalidWorkload ReasonCode = "InvalidWorkload"
	// ResourceNotCovered: a pod requests a resource no resource group of the
	// ClusterQueue covers (Kueue refuses such workloads too).
	ResourceNotCovered ReasonCode = "ResourceNotCovered"
	// NoFlavorMatches: no flavor's node labels and taints admit the pod set.
	NoFlavorMatches ReasonCode = "NoFlavorMatches"
	// ExceedsMaxQuota: the request is larger than the most the ClusterQueue could ever
	// get (nominal + what it may borrow), so it never fits as things are configured.
	ExceedsMaxQuota ReasonCode = "ExceedsMaxQuota"
	// WaitingForQuota: the request could fit once admitted workloads finish, and no
	// preemption is allowed or possible now.
	WaitingForQuota ReasonCode = "WaitingForQuota"
	// WaitingForPreemption: the request fits once the returned victims are preempted.
	WaitingForPreemption ReasonCode = "WaitingForPreemption"
	// BlockedByHead: StrictFIFO: an earlier workload at the head blocks the queue.
	BlockedByHead ReasonCode = "BlockedByHead"
	// Inadmissible: set aside after a failed attempt, until something relevant changes.
	Inadmissible ReasonCode = "Inadmissible"
	// AdmitFailed: Quota.Admit refused an assignment when recording it (its re-check
	// against current usage failed); the engine reports it with Admit's error.
	AdmitFailed ReasonCode = "AdmitFailed"
)

// FlavorResource names one quota cell: a resource in a flavor.
type FlavorResource struct {
	Flavor   string
	Resource resources.Name
}

func (fr FlavorResource) String() string { return fr.Flavor + "/" + string(fr.Resource) }

// FlavorAmount is an amount of one resource in one flavor.
type FlavorAmount struct {
	FlavorResource
	Amount resources.Amount
}

// FlavorAttempt records why one flavor was or was not chosen for a pod set's resource group.
type FlavorAttempt struct {
	Flavor string
	Mode   Mode
	Code   ReasonCode // ReasonNone when the flavor fits (Mode Fit or Borrow)
	// Reasons explain the outcome per resource, e.g. "needs 8 nvidia.com/gpu in flavor
	// h100, 4 free of nominal 128, cannot borrow: cohort global has 0 unused".
	Reasons []Why
}

// ResourceAssignment is the flavor chosen for one resource of a pod set.
type ResourceAssignment struct {
	Resource resources.Name
	Flavor   string
	Amount   resources.Amount // total over the pod set's pods, in quota units
	Mode     Mode
}

// PodSetAssignment is the outcome for one pod set.
type PodSetAssignment struct {
	Name  string
	Count int32 // pods admitted
	// FullCount is the pods the workload asked for, set on an assignment partial
	// admission found (then Count <= FullCount, fewer in some pod set); 0 otherwise
	// (partial.go).
	FullCount int32
	Mode      Mode
	Code      ReasonCode
	Resources []ResourceAssignment // sorted by resource name; empty when Mode is NoFit
	// Tried lists every flavor attempted, per resource group, in the order tried.
	Tried []FlavorAttempt
}

// Flavor returns the flavor assigned to resource r, or "".
func (p PodSetAssignment) Flavor(r resources.Name) string {
	for _, ra := range p.Resources {
		if ra.Resource == r {
			return ra.Flavor
		}
	}
	return ""
}

// Assignment is the quota layer's candidate for one workload: a flavor per pod set and
// resource, the usage it adds, what of it is borrowed and an overall mode (the worst
// pod set's). It is a value: nothing is reserved until Quota.Admit.
type Assignment struct {
	Workload     api.WorkloadID
	ClusterQueue string
	Mode         Mode
	Code         ReasonCode // ReasonNone when Mode is Fit or Borrow
	// Message is a fixed line for humans (a missing ClusterQueue, an invalid workload);
	// read Why(), which also renders the reason of the pod set that decided the mode.
	Message string
	why     int // 1 + the index of that pod set; 0: none
	PodSets []PodSetAssignment
	// Usage is the total quota the workload takes, per flavor and resource, sorted.
	Usage []FlavorAmount
	// Borrowed is the part of Usage above the ClusterQueue's nominal quota, sorted.
	Borrowed []FlavorAmount
	// NeedsPreemption lists the cells where the request exceeds what is available now.
	NeedsPreemption []FlavorResource
	// GPUMilli is the workload's GPU request in the common unit, whatever form it takes
	// (admission fair sharing and chargeback count it).
	GPUMilli resources.MilliGPU
	// Own is set when the flavors were chosen by simulating preemptions for this
	// workload (Kueue's preemption oracle): its priority and age decided, so another
	// workload of the same shape may be answered otherwise.
	Own bool
}

// Fits reports whether the assignment can be admitted without preemption.
func (a Assignment) Fits() bool { return a.Mode >= Borrow }

// Borrows reports whether any of the usage is borrowed.
func (a Assignment) Borrows() bool { return len(a.Borrowed) > 0 }

// FlavorNames are the flavors a uses, sorted, each once (from its pod sets, or from its
// usage for an assignment rebuilt from a status, which has usage only): what Kueue's
// admissionChecksStrategy onFlavors is matched against.
func (a Assignment) FlavorNames() []string {
	var out []string
	for _, ps := range a.PodSets {
		for _, r := range ps.Resources {
			out = append(out, r.Flavor)
		}
	}
	for _, u := range a.Usage {
		out = append(out, u.Flavor)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// String renders the assignment compactly for logs and explanations.
func (a Assignment) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %s: %s", a.Workload, a.ClusterQueue, a.Mode)
	if a.Code != ReasonNone {
		fmt.Fprintf(&b, " (%s)", a.Code)
	}
	for _, ps := range a.PodSets {
		fmt.Fprintf(&b, "; %s:", ps.Name)
		for _, r := range ps.Resources {
			fmt.Fprintf(&b, " %s=%s@%s", r.Resource, resources.Format(r.Resource, r.Amount), r.Flavor)
		}
	}
	return b.String()
}

// VictimReason says which preemption rule selected a victim.
type VictimReason string

const (
	// InClusterQueue: withinClusterQueue, a workload of the preemptor's own queue.
	InClusterQueue VictimReason = "InClusterQueue"
	// InCohortReclamation: reclaimWithinCohort, from a queue borrowing the quota.
	InCohortReclamation VictimReason = "InCohortReclamation"
	// InCohortFairSharing: fair sharing, from a queue with a larger share.
	InCohortFairSharing VictimReason = "InCohortFairSharing"
	// InCohortReclaimWhileBorrowing: borrowWithinCohort, taken by a borrowing preemptor.
	InCohortReclaimWhileBorrowing VictimReason = "InCohortReclaimWhileBorrowing"
)

// Victim is an admitted workload to preempt so that a preemptor fits.
type Victim struct {
	Workload     api.WorkloadID
	ClusterQueue string
	Priority     int32
	Reason       VictimReason
}

// PreemptionResult is the outcome of FindVictims: the victims (empty when none work)
// and why.
type PreemptionResult struct {
	Victims []Victim
	// Code is WaitingForPreemption when Victims is a valid set, else WaitingForQuota
	// (preemption not allowed or no set of candidates frees enough) or ExceedsMaxQuota.
	Code    ReasonCode
	Message string
}
