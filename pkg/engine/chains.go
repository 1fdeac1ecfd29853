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
	return s.eng.cfg.MaxAttempts == 0 && s.lqUsage == nil && e.cq.strategy != api.StrictFIFO &&
		e.quotaAlone &&
		len(s.nominated[id]) == 0 && s.preemptedBy[id] == ""
}

// classBefore is the cycle's order between two members of one class (headKey with
// priority, share and LocalQueue usage equal).
func classBefore(a, b *entry) bool {
	if a.queuedNano != b.queuedNano {
		return a.queuedNano < b.queuedNano
	}
	if a.createdNano != b.createdNano {
		return a.createdNano < b.createdNano
	}
	return a.id < b.id
}

// chain is a followable class whose first member a wake handed the cycle: the rest
// wait in the class's set, which keeps them in the cycle's order.
type chain struct {
	cq      string
	members *entrySet // the class's quota index set, live and ordered
}

// Next hands the cycle the next member of class still parked for quota.
func (s *Scheduler) Next(class string) (Pending, bool) {
	c, ok := s.chains[class]
	if !ok {
		return Pending{}, false
	}
	for e := c.members.firstNotSeeking(); e != nil; e = c.members.firstNotSeeking() {
		if _, blocked := s.queueBlock(e); blocked {
			s.setPark(e, ParkedQueue) // the queue layer's answer; a queue change wakes it
			continue
		}
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
	for _, c := range s.chains {
		if cq := c.cq; !seen[cq] {
			seen[cq] = true
			out = append(out, cq)
		}
	}
	sort.Strings(out)
	return out
}
