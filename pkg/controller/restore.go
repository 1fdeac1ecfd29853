package controller

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// restored is the scheduler state that the Workload objects record and replaying the
// events cannot give back (see engine/restore.go). It is read whenever the scheduler is
// built: on start, so a restarted controller or a new leader continues where the last
// one stopped, and after a change of the queue objects.
type restored struct {
	// preemptedBy: who last preempted each workload (AnnotationPreemptedBy).
	preemptedBy map[api.WorkloadID]api.WorkloadID
	// nominated: the victims of each pending preemptor's current wait: its own record
	// (AnnotationNominatedVictims) joined with the victims still leaving that name it
	// (so a lost record write still makes it wait for them).
	nominated map[api.WorkloadID][]api.WorkloadID
	// history: the preemptions still inside some disruption budget's window.
	history []placement.PreemptionRecord
	// reservations: the pending workloads' reservations (AnnotationReservation).
	reservations map[api.WorkloadID]plan.Reservation
	warnings     []string
}

// readRestored gathers the restorable state from the pass's workloads.
func readRestored(w *world, cs *cycleState, now time.Time) restored {
	r := restored{preemptedBy: map[api.WorkloadID]api.WorkloadID{}, nominated: map[api.WorkloadID][]api.WorkloadID{},
		reservations: map[api.WorkloadID]plan.Reservation{}}
	since, budgets := historySince(w.objs, now)
	for _, id := range cs.keys() {
		t := cs.byID[id]
		if budgets {
			r.addHistory(t, since)
		}
		if t.model == nil {
			continue // finished or unreadable: no longer scheduled
		}
		if by := t.obj.Annotations[AnnotationPreemptedBy]; by != "" {
			r.preemptedBy[id] = api.WorkloadID(by)
		}
		if t.admitted() {
			continue
		}
		r.addNominated(id, parseNominated(t.obj.Annotations[AnnotationNominatedVictims])...)
		if s := t.obj.Annotations[AnnotationReservation]; s != "" {
			res, err := parseReservation(s, t.model, w)
			if err != nil {
				r.warnings = append(r.warnings, err.Error())
				continue
			}
			r.reservations[id] = res
		}
	}
	r.addLeaving(cs)
	return r
}

// addLeaving adds each victim still leaving to the wait of the pending preemptor its
// preempted-by annotation names.
func (r *restored) addLeaving(cs *cycleState) {
	for _, id := range cs.keys() {
		t := cs.byID[id]
		if t.model == nil || !t.admitted() || !t.noticed() {
			continue
		}
		by := api.WorkloadID(t.obj.Annotations[AnnotationPreemptedBy])
		if p := cs.byID[by]; p != nil && p.model != nil && !p.admitted() {
			r.addNominated(by, id)
		}
	}
}

// addNominated adds victims to preemptor's wait, each once.
func (r *restored) addNominated(preemptor api.WorkloadID, victims ...api.WorkloadID) {
	if len(victims) == 0 {
		return
	}
	list := r.nominated[preemptor]
	for _, v := range victims {
		list = appendUnique(list, v)
	}
	r.nominated[preemptor] = list
}

// addHistory adds t's preemptions since the given time. A finished workload's count
// too: a budget limits disruptions, whatever became of the victims.
func (r *restored) addHistory(t *tracked, since time.Time) {
	for _, rec := range parseHistory(api.WorkloadID(wlKey(t.obj)), t.obj.Annotations[AnnotationPreemptionHistory]) {
		if !rec.At.Before(since) {
			r.history = append(r.history, rec)
		}
	}
}

// historySince is the time from which preemptions count against some disruption
// budget (a budget without a window counts them all), and false when no ClusterQueue
// has a budget: then the history is never read.
func historySince(objs *api.Objects, now time.Time) (time.Time, bool) {
	var longest time.Duration
	budgets := false
	for _, cq := range objs.ClusterQueues {
		b := cq.DisruptionBudget
		if b.MaxGPUs <= 0 {
			continue
		}
		if b.Window <= 0 {
			return time.Time{}, true
		}
		budgets, longest = true, max(longest, b.Window)
	}
	return now.Add(-longest), budgets
}

// apply hands the state to a scheduler that was just given every workload.
func (r restored) apply(s *engine.Scheduler) {
	for _, id := range sortedKeys(r.preemptedBy) {
		s.RestorePreemptedBy(id, r.preemptedBy[id])
	}
	for _, id := range sortedKeys(r.nominated) {
		s.RestoreNominated(id, r.nominated[id])
	}
	s.RestoreHistory(r.history)
	for _, id := range sortedKeys(r.reservations) {
		s.RestoreReservation(id, r.reservations[id])
	}
}
