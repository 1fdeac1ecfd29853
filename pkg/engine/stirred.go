package engine

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Stirred workloads. A cycle's admission adds usage to its cohort tree, and that can
// give a parked workload visited later in the same cycle a new answer:
//   - a preemptor the nodes refused after its quota fit (by borrowing) may now have to
//     preempt in its own queue, and does at once;
//   - a preemptor admission refused may now reclaim from a queue the admission pushed
//     into borrowing;
//   - a workload whose queue chooses among several flavors may now be given another
//     flavor (admission picks flavors by usage), whose nodes or quota can hold it
//     (choosesByPreemption).
// A cycle handed every pending workload decides those at their turn. So the scheduler
// hands them to the cycle still parked (Input.Stirred), and each is visited at its
// place in the order only when the cycle admitted a workload of its cohort tree before
// its turn; otherwise its answer is the one it parked with. The wakes after the cycle
// (admittedWakes) stay as they are: they are for the next cycle, where the newcomers
// are running and may be victims.
//
// A StrictFIFO queue is handed whole when all of it is parked (its head never runs
// without its followers behind it): its first member at its turn decides for the rest,
// as a blocked head does.

// stirState is what the cycle knows for its stirred workloads: the cohort trees where
// it admitted something so far, and the StrictFIFO queues whose first stirred member
// decided.
type stirState struct {
	trees  map[string]bool
	strict map[string]bool
}

// noteAdmission records an admission (or a quota reservation) of ClusterQueue cq.
func (c *cycle) noteAdmission(cq string) {
	if len(c.in.Stirred) == 0 {
		return
	}
	if c.stir.trees == nil {
		c.stir.trees = map[string]bool{}
	}
	c.stir.trees[c.in.Trees[cq]] = true
}

// stirPass is the stirred workloads' test at their turn; one it lets through is woken
// just before the visit.
func (c *cycle) stirPass() func(Pending) bool {
	return func(p Pending) bool {
		pass, decided := c.stir.strict[p.ClusterQueue]
		if !decided {
			pass = c.stir.trees[c.in.Trees[p.ClusterQueue]]
			if p.Strategy == api.StrictFIFO {
				if c.stir.strict == nil {
					c.stir.strict = map[string]bool{}
				}
				c.stir.strict[p.ClusterQueue] = pass
			}
		}
		if pass {
			c.in.Followers.Visit(p.id())
		}
		return pass
	}
}

// stirredInput is the parked workloads a cycle's admission may stir, in the cohort
// trees where the cycle has workloads to visit (none when the engine does not preempt
// and no queue chooses among flavors). A StrictFIFO queue with a workload to visit is
// not handed: only a whole queue is.
func (s *Scheduler) stirredInput(in *Input) []Pending {
	preempt := s.eng.cfg.Preemption
	if !preempt && !s.flavorChoices {
		return nil
	}
	trees, strictActive := s.visitedTrees(in)
	index := s.parked.byRoot
	if !s.flavorChoices {
		index = s.parked.preemptors // only a preemptor can be stirred then
	}
	out := s.stirBuf[:0]
	var strict []string
	for _, root := range trees {
		for _, e := range index[root].entries() {
			switch {
			case !s.stirs(e, preempt):
			case e.cq.strategy != api.StrictFIFO:
				out = append(out, s.pendingOf(e))
			case !strictActive[e.res.ClusterQueue] && !slices.Contains(strict, e.res.ClusterQueue):
				strict = append(strict, e.res.ClusterQueue)
			}
		}
	}
	for _, cq := range strict {
		for _, e := range s.parked.byCQ[cq].entries() {
			if !e.park.timeBound() && e.park != ParkedQueue {
				out = append(out, s.pendingOf(e))
			}
		}
	}
	s.stirBuf = out
	return out
}

// visitedTrees is the cohort trees of the workloads in handed to its cycle, and the
// StrictFIFO queues among theirs.
func (s *Scheduler) visitedTrees(in *Input) ([]string, map[string]bool) {
	seen := map[string]bool{}
	strict := map[string]bool{}
	var trees []string
	add := func(p Pending) {
		if p.Strategy == api.StrictFIFO {
			strict[p.ClusterQueue] = true
		}
		if root := s.rootOf(p.ClusterQueue); !seen[root] {
			seen[root] = true
			trees = append(trees, root)
		}
	}
	for _, p := range in.Pending {
		add(p)
	}
	for _, p := range in.QuotaSeekers {
		add(p)
	}
	for _, c := range in.SlotSeekers {
		add(c.First)
	}
	return trees, strict
}

// stirs reports whether an admission in e's cohort tree may give parked e a new answer
// within the same cycle (preempt: the engine preempts at all).
func (s *Scheduler) stirs(e *entry, preempt bool) bool {
	if e.seeking {
		return false // handed as a quota seeker already
	}
	switch e.park {
	case ParkedNodes:
		return (preempt && e.cq.preempts) || e.cq.flavorChoice
	case ParkedQuota:
		p := e.cq.policy
		return (preempt && (p.ReclaimWithinCohort.Enabled() || p.BorrowWithinCohort.Policy.Enabled())) ||
			choosesByPreemption(e)
	}
	return false
}

// choosesByPreemption reports whether admission's flavor choice for e may get better as
// usage grows: its queue chooses among several flavors and may preempt, so a flavor
// where it would have to preempt can stop the search, or not, by what preemption could
// free (Kueue's whenCanPreempt). Each flavor's own answer only gets worse with usage;
// the choice between them need not.
func choosesByPreemption(e *entry) bool { return e.cq.flavorChoice && e.cq.preempts }
