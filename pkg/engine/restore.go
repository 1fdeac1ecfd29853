package engine

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// State a driver restores after a restart (or a leader change, or a rebuild after the
// queue objects changed). Replaying the events (Submit, Started, Requeued) brings every
// workload back to where it stands; what follows was decided by cycles the new
// scheduler did not run, so no event can express it: the victims a preemptor noticed
// in its current wait, who last preempted whom, the preemption history disruption
// budgets count, and the reservations whose ETA must not slip. A driver calls these
// after submitting the workloads and before the first Cycle; each ignores a workload
// the scheduler does not know (the driver's record may name one that is gone).

// RestoreNominated sets the victims preemptor noticed since it last started (what
// Noticed appends to): while they leave it waits for them, and those running again it
// does not preempt a second time in the same wait.
func (s *Scheduler) RestoreNominated(preemptor api.WorkloadID, victims []api.WorkloadID) {
	if s.wls[preemptor] != nil {
		s.nominated[preemptor] = append([]api.WorkloadID(nil), victims...)
	}
}

// RestorePreemptedBy records that by last preempted victim (what Noticed records): a
// workload never preempts its own preemptor, so preemption chains cannot cycle.
func (s *Scheduler) RestorePreemptedBy(victim, by api.WorkloadID) {
	if s.wls[victim] != nil {
		s.preemptedBy[victim] = by
	}
}

// RestoreHistory replaces the preemption history with recs, oldest first (ties by
// workload), as disruption budgets count it. It replaces rather than appends so that a
// driver may replay notices (Noticed) and still restore each record once.
func (s *Scheduler) RestoreHistory(recs []placement.PreemptionRecord) {
	h := append([]placement.PreemptionRecord(nil), recs...)
	sort.SliceStable(h, func(i, j int) bool {
		if !h[i].At.Equal(h[j].At) {
			return h[i].At.Before(h[j].At)
		}
		return h[i].Workload < h[j].Workload
	})
	s.history = h
}

// RestoreReservation hands a pending workload the reservation it held (what Committed
// keeps): the next cycle offers it to placement as the previous one, kept while still
// valid, so a restart cannot move its ETA. Ignored unless the workload is pending.
func (s *Scheduler) RestoreReservation(id api.WorkloadID, r plan.Reservation) {
	e := s.wls[id]
	if e == nil || e.phase != phasePending {
		return
	}
	r.Workload = id
	e.reserved = &r
}
