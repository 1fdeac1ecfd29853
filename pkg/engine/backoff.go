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
	// Limited makes BackoffLimit apply even at 0 (Kueue's backoffLimitCount: 0, no
	// retry at all); without it 0 means no limit.
	Limited bool
}

// limitExceeded reports whether the failures-th failure is past the limit.
func (p RequeuePolicy) limitExceeded(failures int) bool {
	return (p.Limited || p.BackoffLimit > 0) && failures > p.BackoffLimit
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
	if s.eng.cfg.Requeue.BackoffBase <= 0 {
		return
	}
	s.BackOffWith(id, evictedAt, failures, s.eng.cfg.Requeue)
}

// BackOffWith is BackOff by the given policy instead of the scheduler's: the simulator
// backs off waitForPodsReady timeouts by Kueue's requeuingStrategy, which is set apart
// from the failure policy. A policy with neither a base nor a limit does nothing.
func (s *Scheduler) BackOffWith(id api.WorkloadID, evictedAt time.Time, failures int, pol RequeuePolicy) {
	e := s.wls[id]
	limited := pol.Limited || pol.BackoffLimit > 0
	if e == nil || e.phase != phasePending || failures <= 0 || (pol.BackoffBase <= 0 && !limited) {
		return
	}
	r := plan.Rejection{Workload: id, ClusterQueue: e.res.ClusterQueue, Layer: plan.LayerAdmission}
	b := &plan.Backoff{Failures: failures, EvictedAt: evictedAt}
	switch {
	case pol.limitExceeded(failures):
		e.notBefore = time.Time{}
		r.Reason, b.Limit = plan.ReasonRequeuingLimitExceeded, pol.BackoffLimit
		s.setPark(e, ParkedLimit)
	case pol.BackoffBase > 0:
		e.notBefore = evictedAt.Add(pol.Wait(failures))
		r.Reason, b.RetryAt = plan.ReasonBackoffAfterFailure, e.notBefore
		s.setPark(e, ParkedBackoff)
	default:
		return // limited, within the limit, no wait: queued at once
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
	var over []*entry
	for _, e := range s.parked.byKind[ParkedBackoff].entries() {
		if !e.notBefore.After(now) {
			over = append(over, e)
		}
	}
	s.wakeEntries(over)
}
