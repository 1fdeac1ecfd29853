package engine

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// RequeuePolicy is how a workload evicted by a failure (a node or device failing under
// it) queues again, as Kueue's waitForPodsReady.requeuingStrategy does for its timeouts:
// after its n-th failure it waits BackoffBase·2^(n-1), at most BackoffMax, before it is
// tried again, so a workload that keeps failing does not take the capacity it fails on
// over and over; past BackoffLimit failures (0: no limit) it is not tried again until
// its object changes (Kueue deactivates it). Preempted and drained workloads queue
// again at once. The zero value backs nothing off.
type RequeuePolicy struct {
	BackoffBase  time.Duration
	BackoffMax   time.Duration
	BackoffLimit int
}

// Validate reports a policy the scheduler cannot run with.
func (p RequeuePolicy) Validate() error {
	switch {
	case p.BackoffBase < 0:
		return fmt.Errorf("requeue backoff base %s: must not be negative", p.BackoffBase)
	case p.BackoffMax < 0:
		return fmt.Errorf("requeue backoff max %s: must not be negative", p.BackoffMax)
	case p.BackoffMax > 0 && p.BackoffMax < p.BackoffBase:
		return fmt.Errorf("requeue backoff max %s: must not be below the base %s", p.BackoffMax, p.BackoffBase)
	case p.BackoffLimit < 0:
		return fmt.Errorf("requeue backoff limit %d: must not be negative", p.BackoffLimit)
	}
	return nil
}

// Wait is how long a workload waits after its n-th failure (n >= 1).
func (p RequeuePolicy) Wait(n int) time.Duration {
	d := p.BackoffBase
	for i := 1; i < n; i++ {
		if p.BackoffMax > 0 && d >= p.BackoffMax {
			break
		}
		if d > time.Duration(1<<62)/2 {
			break // saturate rather than overflow
		}
		d *= 2
	}
	if p.BackoffMax > 0 && d > p.BackoffMax {
		d = p.BackoffMax
	}
	return d
}

// BackOff holds back a pending workload evicted by its failures-th failure at
// evictedAt, by the requeue policy: it is not tried before the backoff is over (or
// at all past the limit). Drivers call it after Requeued (and after Submit when they
// restart with a workload still backing off); the count comes from them, so a
// restart resumes the same backoff. Without a policy it does nothing.
func (s *Scheduler) BackOff(id api.WorkloadID, evictedAt time.Time, failures int) {
	e := s.wls[id]
	pol := s.eng.cfg.Requeue
	if e == nil || e.phase != phasePending || failures <= 0 || pol.BackoffBase <= 0 {
		return
	}
	r := plan.Rejection{Workload: id, ClusterQueue: e.res.ClusterQueue, Layer: plan.LayerAdmission}
	b := &plan.Backoff{Failures: failures, EvictedAt: evictedAt}
	if pol.BackoffLimit > 0 && failures > pol.BackoffLimit {
		e.notBefore = time.Time{}
		r.Reason, b.Limit = plan.ReasonRequeuingLimitExceeded, pol.BackoffLimit
		s.setPark(e, ParkedLimit)
	} else {
		e.notBefore = evictedAt.Add(pol.Wait(failures))
		r.Reason, b.RetryAt = plan.ReasonBackoffAfterFailure, e.notBefore
		s.setPark(e, ParkedBackoff)
	}
	r.Evidence = &plan.Evidence{Backoff: b}
	e.last, e.hasLast, e.reserved = r, true, nil
}

// NextWake is when the earliest backoff ends, for drivers to run a cycle then (no
// other event may come).
func (s *Scheduler) NextWake() (time.Time, bool) {
	var next time.Time
	for _, e := range s.parked.byKind[ParkedBackoff].entries() {
		if next.IsZero() || e.notBefore.Before(next) {
			next = e.notBefore
		}
	}
	return next, !next.IsZero()
}

// backoffsOver wakes the workloads whose backoff is over by now.
func (s *Scheduler) backoffsOver(now time.Time) {
	s.wakeSet(s.parked.byKind[ParkedBackoff], func(e *entry) bool { return !e.notBefore.After(now) })
}
