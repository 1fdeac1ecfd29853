package engine

import (
	"math/rand"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Quota is the admission layer as one cycle sees it: a what-if copy of the quota state
// that the cycle may change freely (Admit) without touching the real one.
type Quota interface {
	// Assign returns the candidate flavor assignment of w in clusterQueue; nothing is
	// reserved.
	Assign(w *api.Workload, clusterQueue string) admission.Assignment
	// AssignWithout is Assign with the named flavors ruled out (flavor fallback when
	// placement could not use them); only those flavors, not others sharing a label.
	AssignWithout(w *api.Workload, clusterQueue string, without map[string]bool) admission.Assignment
	// Victims returns the admitted workloads to preempt so that a (Mode Preempt) fits.
	Victims(w *api.Workload, a admission.Assignment) admission.PreemptionResult
	// Admit reserves a's usage in this copy.
	Admit(w *api.Workload, a admission.Assignment) error
	// Share is the ClusterQueue's dominant resource share in thousandths (fair sharing);
	// queue heads of less-served queues go first.
	Share(clusterQueue string) int64
	// Short reports, by a cheap bound, that Assign would answer NoFit for p now (false
	// says nothing).
	Short(p Pending) bool
	// AssignBlocked is Assign keeping mode Preempt where w's queue may preempt nothing
	// (Kueue's answer there); it sizes an in-cycle hold (holds.go).
	AssignBlocked(w *api.Workload, clusterQueue string) admission.Assignment
	// FitsAfter reports whether a fits once gone have left and held are counted: Kueue's
	// check of a head after preemptions were issued in the cycle.
	FitsAfter(a admission.Assignment, held []admission.Assignment, gone []api.WorkloadID) bool
	// Unreclaimable is the quota held in the cycle for a head that needs preemption but
	// has no victims, when its queue cannot always reclaim (nil otherwise).
	Unreclaimable(a admission.Assignment) []admission.FlavorAmount
	// MayHold reports whether clusterQueue may hold quota for such a head at all.
	MayHold(clusterQueue string) bool
	// WithHeld is a copy of this quota with the held usages counted (holds.go).
	WithHeld(held []admission.Assignment) Quota
	// FitsHeld is FitsAfter on a WithHeld copy, own (a hold of a's own queue) given back.
	FitsHeld(a admission.Assignment, own []admission.FlavorAmount, extra []admission.Assignment, gone []api.WorkloadID) bool
	// Hold adds an admission's usage to a WithHeld copy, so it stays in step.
	Hold(clusterQueue string, usage []admission.FlavorAmount)
	// ShortHeld is Short on a WithHeld copy, own (a hold of p's own queue) given back.
	ShortHeld(p Pending, own []admission.FlavorAmount) bool
}

// PlaceResult is the placement layer's answer for a whole gang.
type PlaceResult struct {
	OK bool
	// Bindings of every gang pod, already assumed in the overlay when OK.
	Bindings []plan.Binding
	// Failure says why not, when !OK: a stable code (plan.ReasonNoNodeFits, ...) and
	// placement's diagnosis behind it, typed. It may be shared (failed-shape memo).
	Failure *plan.PlaceFailure
	// NoFitNow says, when !OK, that the gang does not fit on the overlay as it stands
	// even with no reservation held (a necessary condition failed, or placement failed
	// under no holds), so a reservation walk need not ask again.
	NoFitNow bool
}

// PreemptResult is the placement layer's choice of running gangs to remove so that w
// fits on the nodes (not the quota).
type PreemptResult struct {
	Victims []api.WorkloadID
	// Notices are placement's notices for the victims (eviction time after the grace
	// period, reason); a victim without one gets Config.Grace.
	Notices []placement.Notice
	// Records are the preemptions as disruption-budget history entries; the cycle
	// appends them so a later preemptor in the same cycle sees them.
	Records []placement.PreemptionRecord
	Reason  string // why none were found, when Victims is empty
}

// PlaceCall is one question to the placement layer: may this gang, under this quota
// assignment, go on this overlay? Running and History matter to Preempt and Reserve.
type PlaceCall struct {
	Overlay    *cluster.Overlay
	Workload   *api.Workload
	Assignment admission.Assignment
	// Rand breaks ties between equally scored nodes (the cycle's injected source; nil
	// lets the placer use its own seeded one).
	Rand    *rand.Rand
	Now     time.Time
	Running []placement.Running // for Preempt
	// Ends are the running gangs in walk order, for Reserve (built once per cycle).
	Ends    *placement.RunningByEnd
	History []placement.PreemptionRecord
	// Grace is the engine's notice period, used when the placer has none of its own.
	Grace time.Duration
	// Held are the reservations made earlier in this cycle (Reserve must not count on
	// their GPUs); Previous is this workload's reservation from the last cycle (kept
	// while still valid, so its ETA cannot slip).
	Held     placement.ReservationSet
	Previous *placement.Reservation
	// Quiet asks Place for no per-node diagnosis on failure (only the failure code).
	Quiet bool
	// NeedGPUMilli and FreeGPUMilli bound the gang's GPU need from below and the free
	// GPU from above (gate.go), so Reserve can skip end times that cannot be enough.
	NeedGPUMilli, FreeGPUMilli resources.MilliGPU
	// NoFitNow tells Reserve that Place has just failed for this assignment on this
	// overlay with nothing held (PlaceResult.NoFitNow).
	NoFitNow bool
}

// nodePreempter is what a Placer may also say: whether a ClusterQueue's workloads may
// preempt on the nodes at all. The cycle asks before it lists eligible victims, which
// costs a walk over every running workload.
type nodePreempter interface {
	Preempts(clusterQueue string) bool
}

// Placer is the placement layer as the cycle uses it. Every method leaves the overlay as
// it found it, except Place on success (the gang's pods stay assumed).
type Placer interface {
	Place(c PlaceCall) PlaceResult
	// Preempt chooses running gangs to remove (within the ClusterQueue's preemption
	// policy and disruption budgets, given the past preemptions in History).
	Preempt(c PlaceCall) PreemptResult
	// Reserve says where and when the gang could start as running gangs end (backfill).
	Reserve(c PlaceCall) (plan.Reservation, bool)
}
