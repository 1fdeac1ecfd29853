package placement

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// This file holds the values of backfill reservations (Slurm's model): when a queue's
// head cannot be placed, when and where could it start, and which later workloads may
// use the capacity it is waiting for. The walk over end times is in reserve_plan.go,
// the backfill check in reserve_allow.go.

// Reservation holds capacity for a workload that cannot start yet: at Start, the pods
// of Pods can be bound (every running workload in Waits will have ended by then, since
// they end by their max runtime). Start is the workload's ETA.
type Reservation struct {
	Workload api.WorkloadID
	Queue    string
	Start    time.Time
	// Pods is the planned placement at Start: pod → node → devices.
	Pods []cluster.BoundPod
	// Waits lists the running workloads whose end the reservation waits for, in end
	// order; the last one's end is Start.
	Waits []api.WorkloadID
}

// Nodes returns the reserved nodes, sorted.
func (r Reservation) Nodes() []string { return sortedKeys(r.devicesByNode()) }

// GPUs returns the device IDs reserved on node (nil when the node is not reserved or
// only non-GPU resources of it are).
func (r Reservation) GPUs(node string) []string { return r.devicesByNode()[node] }

// ReservationRequest is everything a reservation walk reads besides the overlay.
type ReservationRequest struct {
	Workload api.WorkloadID
	Queue    string
	Running  *RunningByEnd // their ExpectedEnd drives the walk; zero = no bound
	Now      time.Time
	// Held are reservations of workloads ahead of this one: from its Start on, each
	// holds its pods' capacity, so a later reservation cannot count on it.
	Held ReservationSet
	// Previous is this workload's reservation from the last cycle, if any. It is kept
	// when it is still valid and the new walk would start later, so backfilled work
	// can never push an ETA back.
	Previous *Reservation
	// NeedGPUMilli is a lower bound of the GPU the gang needs at once and FreeGPUMilli
	// an upper bound of what is free now (0: unknown). With both the walk starts where
	// enough GPUs could be free at all, and searches onward from there.
	NeedGPUMilli, FreeGPUMilli resources.MilliGPU
	// MayFit, when set, is a cheap necessary condition for the gang to fit on an overlay
	// (e.g. enough nodes with enough free GPUs): the walk asks it before each full fit
	// and skips the fit where it fails.
	MayFit func(*cluster.Overlay) bool
	// NoFitNow says the caller has just failed to fit the gang on the overlay as given
	// (no other reservation held): the walk does not ask again whether it fits now,
	// a full placement over every node that would fail the same way.
	NoFitNow bool
}

// ReserveOutcome says what the reservation walk concluded.
type ReserveOutcome string

const (
	// ReserveFitsNow: the gang fits now; place it instead of reserving.
	ReserveFitsNow ReserveOutcome = "FitsNow"
	// Reserved: the gang fits once the workloads in Waits end; see Reservation.
	Reserved ReserveOutcome = "Reserved"
	// ReserveNoETA: it does not fit even when every workload with a known end has
	// ended (unbounded workloads, or the cluster is too small).
	ReserveNoETA ReserveOutcome = "NoETA"
)

// ReservationResult is the outcome of a reservation walk, with its explanation.
type ReservationResult struct {
	Workload    api.WorkloadID
	Outcome     ReserveOutcome
	Reservation *Reservation // set when Outcome is Reserved
	// Reason says in words how the ETA was found or why there is none.
	Reason string
	// Unbounded lists running workloads with no end time: capacity no ETA may count on.
	Unbounded []api.WorkloadID
	// KeptPrevious is true when last cycle's reservation was still valid and earlier.
	KeptPrevious bool
}

// ReservationSet is the reservations in force in one cycle, in the order they were
// made (queue heads by priority).
type ReservationSet []Reservation

// For returns the reservation of workload w, if any.
func (s ReservationSet) For(w api.WorkloadID) (Reservation, bool) {
	for _, r := range s {
		if r.Workload == w {
			return r, true
		}
	}
	return Reservation{}, false
}
