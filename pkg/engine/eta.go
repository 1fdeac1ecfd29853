package engine

import (
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// Ending is an admitted workload of a cohort tree and when it is expected to end.
type Ending struct {
	Workload api.WorkloadID
	At       time.Time
}

// QuotaETA estimates when a workload held by quota could be admitted: the admitted
// workloads ending (those of its cohort tree with a known end) are released in order
// of their ends, on a copy of the quota, until admission would take it. It is a lower
// bound: the nodes and the workloads queued ahead are not counted. ok is false when no
// known end frees enough. The simulator's explain and the controller's Workload status
// both estimate with it, so a cluster and its simulation give the same ETA.
func QuotaETA(q *admission.Quota, w *api.Workload, cq string, ending []Ending) (at time.Time, after api.WorkloadID, ok bool) {
	ends := append([]Ending(nil), ending...)
	sort.Slice(ends, func(i, j int) bool {
		if !ends[i].At.Equal(ends[j].At) {
			return ends[i].At.Before(ends[j].At)
		}
		return ends[i].Workload < ends[j].Workload // same inputs, same ETA
	})
	c := q.Clone()
	for _, e := range ends {
		if err := c.Release(e.Workload); err != nil {
			continue // not counted in the quota (already leaving)
		}
		if c.Assign(w, cq).Fits() {
			return e.At, e.Workload, true
		}
	}
	return time.Time{}, "", false
}

// QuotaETABasis says what a QuotaETA rests on, for explain and the Workload status.
func QuotaETABasis(after api.WorkloadID) string {
	return "estimated from quota: enough quota is free once " + string(after) +
		" ends (running workloads of the cohort tree ending as expected; nodes and workloads ahead not counted)"
}

// ReservationETABasis says what a reservation's ETA rests on.
const ReservationETABasis = "reservation: placement planned the gang on the GPUs running workloads free"
