package engine

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// The scheduler's side of Followers: the parked members of followable classes that a
// capacity wake left parked behind their class's first member, this cycle only.

// followable reports whether e's class may be followed: its members are ordered by
// queue time alone within the class (no StrictFIFO head rules, no admission fair
// sharing between LocalQueues, not a preemptor or a victim, whose order and steps are
// their own), admission's NoFit for it is final for the cycle (one pod set, no
// preemption by its ClusterQueue), and every workload the cycle visits may count
// (no attempt cap).
func (s *Scheduler) followable(e *entry) bool {
	id := e.id
	return s.eng.cfg.MaxAttempts == 0 && s.lqUsage == nil && e.strategy != api.StrictFIFO &&
		!preempts(e.policy) && len(e.w.PodSets) == 1 && e.res.OK() &&
		len(s.nominated[id]) == 0 && s.preemptedBy[id] == ""
}

// classBefore is the cycle's order between two members of one class (headKey with
// priority, share and LocalQueue usage equal).
func classBefore(a, b *entry) bool {
	if !a.queuedAt.Equal(b.queuedAt) {
		return a.queuedAt.Before(b.queuedAt)
	}
	if !a.w.Created.Equal(b.w.Created) {
		return a.w.Created.Before(b.w.Created)
	}
	return a.id < b.id
}

// Next hands the cycle the next member of class still parked for quota.
func (s *Scheduler) Next(class string) (Pending, bool) {
	chain := s.chains[class]
	for len(chain) > 0 {
		e := chain[0]
		chain = chain[1:]
		if e.phase != phasePending || e.park != ParkedQuota {
			continue // woken or gone since
		}
		if _, blocked := s.queueBlock(e); blocked {
			continue
		}
		s.chains[class] = chain
		s.setPark(e, NotParked)
		s.considered++
		return s.pendingOf(e), true
	}
	delete(s.chains, class)
	return Pending{}, false
}

// ClusterQueues names the ClusterQueues of the waiting chains, sorted.
func (s *Scheduler) ClusterQueues() []string {
	seen := map[string]bool{}
	var out []string
	for _, chain := range s.chains {
		if cq := chain[0].res.ClusterQueue; !seen[cq] {
			seen[cq] = true
			out = append(out, cq)
		}
	}
	sort.Strings(out)
	return out
}
