package sim

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// RunningEnd says when a running workload is expected to end: w started its current
// run at started (a simulated offset) with done of its work already done (saved
// progress). ok false: unknown. It is how an ETA's runtime knowledge is chosen: the
// simulator's own (the trace's durations, as declared runtimes), none, or a learned
// estimate.
type RunningEnd func(w *api.Workload, started, done time.Duration) (end time.Duration, ok bool)

// PendingETA is what explain says of a pending workload's start, in parts.
type PendingETA struct {
	// Layer holds the workload ("" when the engine has not tried it yet).
	Layer plan.Layer
	// Reservation is the engine's ETA for the gang's reservation, when it holds one. The
	// engine plans it with the simulator's runtimes whatever RunningEnd says.
	Reservation *Seconds
	// Quota is the quota ETA (engine.Scheduler.QueuedQuotaETA) when quota holds the
	// workload, with the running workloads' ends from the RunningEnd given (the
	// workloads queued ahead run for the engine's expected run times); nil when no known
	// end frees enough.
	Quota *Seconds
}

// ETA is the estimate explain gives: the reservation's, else the quota's.
func (p PendingETA) ETA() (Seconds, bool) {
	switch {
	case p.Reservation != nil:
		return *p.Reservation, true
	case p.Quota != nil:
		return *p.Quota, true
	}
	return 0, false
}

// PendingETAOf is explain's ETA of a pending workload, cheap enough to ask at every
// submission of a long replay: it walks only the running workloads (explain walks every
// live one), so workloads under a preemption notice, which leave within their grace
// period, are not counted as ending. end nil: explain's own ends (the remaining run
// time, else the maximum runtime). ok false: the workload is not pending or is marked
// as never fitting.
func (s *Simulator) PendingETAOf(id api.WorkloadID, end RunningEnd) (PendingETA, bool) {
	st, found := s.wls[id]
	if !found || !st.submitted || st.phase != plan.Pending || s.neverFit.marked[id] != nil {
		return PendingETA{}, false
	}
	var out PendingETA
	if resv, ok := s.sched.Reservation(id); ok {
		out.Layer, out.Reservation = plan.LayerPlacement, etaSeconds(resv.ETA)
		return out, true
	}
	last, ok := s.sched.LastRejection(id)
	if !ok {
		return out, true
	}
	out.Layer = last.Layer
	if last.Layer == plan.LayerAdmission {
		out.Quota = s.quotaETAWith(st, end)
	}
	return out, true
}

// quotaETAWith is quotaETA over the running workloads, with their ends from end.
func (s *Simulator) quotaETAWith(st *wlState, end RunningEnd) *Seconds {
	root := s.sched.RootOf(st.clusterQueue)
	ends := make([]engine.Ending, 0, len(s.views.of))
	for _, r := range s.views.of {
		if s.sched.RootOf(r.clusterQueue) != root {
			continue
		}
		at, ok := r.expectedEnd()
		if end != nil {
			at, ok = end(r.w, r.startedAt, r.base)
		}
		if ok {
			ends = append(ends, engine.Ending{Workload: r.id, At: Epoch().Add(at)})
		}
	}
	q, ok := s.sched.QueuedQuotaETA(s.quota, st.id, ends, Epoch().Add(s.now))
	if !ok {
		return nil
	}
	eta := Seconds(q.At.Sub(Epoch()))
	return &eta
}
