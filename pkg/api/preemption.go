package api

import "time"

// PriorityAge is what a preemption policy compares between a preemptor and a victim:
// priority, then (under LowerOrNewerEqualPriority) creation time.
type PriorityAge struct {
	Priority int32
	Created  time.Time
}

// PriorityAge is the workload's side of a preemption policy comparison.
func (w *Workload) PriorityAge() PriorityAge {
	return PriorityAge{Priority: w.Priority, Created: w.Created}
}

// Allows reports whether policy p lets preemptor preempt victim. It is the one place the
// Kueue policies compare priorities; which workloads a policy field covers (own queue,
// other queues of the cohort) is the caller's concern.
//
//   - LowerPriority: the victim's priority is lower.
//   - LowerOrNewerEqualPriority: lower, or equal and the victim created later.
//   - Any: every victim.
//   - Never, the empty value and unknown values: none.
//
// The empty value means Never, Kueue's default for withinClusterQueue,
// reclaimWithinCohort and borrowWithinCohort.policy; pkg/manifest writes Never for every
// absent field, so loaded ClusterQueues never hold it. Which values each field accepts is
// the loader's check, not this method's.
func (p PreemptionPolicy) Allows(preemptor, victim PriorityAge) bool {
	switch p {
	case PreemptAny:
		return true
	case PreemptLowerPriority:
		return victim.Priority < preemptor.Priority
	case PreemptLowerOrNewerEqualPriority:
		return victim.Priority < preemptor.Priority ||
			(victim.Priority == preemptor.Priority && victim.Created.After(preemptor.Created))
	}
	return false
}

// Enabled reports whether p allows some preemption: false exactly for the values Allows
// refuses every victim under (Never, empty, unknown).
func (p PreemptionPolicy) Enabled() bool {
	switch p {
	case PreemptAny, PreemptLowerPriority, PreemptLowerOrNewerEqualPriority:
		return true
	}
	return false
}

// Allows reports whether a preemptor that borrows may take victim from another queue of
// its cohort: the policy allows it and the victim's priority is at most
// MaxPriorityThreshold (when set).
func (b BorrowWithinCohort) Allows(preemptor, victim PriorityAge) bool {
	if b.MaxPriorityThreshold != nil && victim.Priority > *b.MaxPriorityThreshold {
		return false
	}
	return b.Policy.Allows(preemptor, victim)
}
