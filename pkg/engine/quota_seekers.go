package engine

import (
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// Quota seekers. When quota is freed in a cohort tree, the first parked member of each
// class there (and each workload parked alone) whose quota is not certainly short as
// the cycle starts may be admitted now. A finish frees a little quota and many classes
// pass that test; the cycle's first admissions take the quota and the rest would be
// refused again, each a visit, a rejection and a park. So the scheduler hands them to
// the cycle still parked (Input.QuotaSeekers), and each is visited at its place in the
// order only if the cycle's quota, as its admissions left it, is not certainly short
// for it then (Quota.Short: the cycle only adds usage, so a workload it stops would get
// NoFit at its visit). One it lets through is woken just before the visit; one it stops
// stays parked, as its visit would have left it.

// quotaSeekerPass is the quota seekers' test at their turn.
func (c *cycle) quotaSeekerPass() func(Pending) bool {
	return func(p Pending) bool {
		if c.in.Quota.Short(p) || c.heldShort(p) {
			return false
		}
		c.in.Followers.Visit(p.id())
		return true
	}
}

// Visit wakes a quota seeker the cycle is about to visit.
func (s *Scheduler) Visit(id api.WorkloadID) {
	if e := s.wls[id]; e != nil {
		e.seeking = false
		s.setPark(e, NotParked)
		s.considered++
	}
}

// seekQuota hands the cycle the quota-parked workloads a wake found, still parked; the
// ones of StrictFIFO queues are woken with their queues instead (a head never runs
// without its followers behind it).
func (s *Scheduler) seekQuota(found []*entry) {
	var strict []*entry
	for _, e := range found {
		if e.cq.strategy == api.StrictFIFO {
			strict = append(strict, e)
			continue
		}
		s.quotaSeekers = append(s.quotaSeekers, e)
	}
	s.wakeEntries(strict)
}

// quotaSeekersInput is the quota seekers as the cycle takes them: the ones a queue
// stop policy holds park as ParkedQueue instead (the queue layer's answer).
//
// A seeker waits for its turn marked seeking, so that Next, asked for its class by an
// earlier member, hands the next member instead; the marks of the last cycle's seekers
// are cleared first.
func (s *Scheduler) quotaSeekersInput(q *admission.Quota) []Pending {
	for _, e := range s.seeking {
		e.seeking = false
	}
	s.seeking = s.seeking[:0]
	out := s.seekerBuf[:0] // the cycle copies them into its order; reused next cycle
	for _, e := range s.quotaSeekers {
		if e.park != ParkedQuota || e.phase != phasePending {
			continue // woken or moved since it was found
		}
		if _, blocked := s.queueBlock(e); blocked {
			s.setPark(e, ParkedQueue)
			continue
		}
		e.seeking = true
		s.seeking = append(s.seeking, e)
		p := s.pendingOf(e)
		p.short = s.shortCheck(e, q)
		out = append(out, p)
	}
	s.quotaSeekers = s.quotaSeekers[:0]
	s.seekerBuf = out
	return out
}
