package admission

import (
	"github.com/gantry-sched/gantry/pkg/resources"
)

// lookup resolves a ClusterQueue and a flavor-resource; ok is false for unknown names.
func (q *Quota) lookup(cq, flavor string, r resources.Name) (nodeID, frID, bool) {
	n, ok := q.s.cqID(cq)
	if !ok {
		return 0, 0, false
	}
	f, ok := q.s.frIndex[FlavorResource{flavor, r}]
	return n, f, ok
}

// Available is how much of resource r in flavor ClusterQueue cq may still use now,
// borrowing included (0 for unknown names).
func (q *Quota) Available(cq, flavor string, r resources.Name) resources.Amount {
	n, f, ok := q.lookup(cq, flavor, r)
	if !ok {
		return 0
	}
	return max(0, q.available(n, f))
}

// Usage is ClusterQueue cq's current usage of r in flavor.
func (q *Quota) Usage(cq, flavor string, r resources.Name) resources.Amount {
	n, f, ok := q.lookup(cq, flavor, r)
	if !ok {
		return 0
	}
	return q.usage[q.s.idx(n, f)]
}

// Nominal is ClusterQueue cq's nominal quota of r in flavor.
func (q *Quota) Nominal(cq, flavor string, r resources.Name) resources.Amount {
	n, f, ok := q.lookup(cq, flavor, r)
	if !ok {
		return 0
	}
	return q.s.nominal[q.s.idx(n, f)]
}

// Borrowed is how much of cq's usage of r in flavor is above its nominal quota.
func (q *Quota) Borrowed(cq, flavor string, r resources.Name) resources.Amount {
	n, f, ok := q.lookup(cq, flavor, r)
	if !ok {
		return 0
	}
	i := q.s.idx(n, f)
	return max(0, q.usage[i]-q.s.subtree[i])
}

// CohortUsage is the usage cohort takes from its own subtree quota: the sum over its
// children of what each uses above its guaranteed quota.
func (q *Quota) CohortUsage(cohort, flavor string, r resources.Name) resources.Amount {
	n, ok := q.s.byName["cohort:"+cohort]
	f, ok2 := q.s.frIndex[FlavorResource{flavor, r}]
	if !ok || !ok2 {
		return 0
	}
	return q.usage[q.s.idx(n, f)]
}

// CohortQuota is cohort's subtree quota of r in flavor: its own nominal plus what its
// children lend to it.
func (q *Quota) CohortQuota(cohort, flavor string, r resources.Name) resources.Amount {
	n, ok := q.s.byName["cohort:"+cohort]
	f, ok2 := q.s.frIndex[FlavorResource{flavor, r}]
	if !ok || !ok2 {
		return 0
	}
	return q.s.subtree[q.s.idx(n, f)]
}

// Share is ClusterQueue cq's weighted dominant resource share, in thousandths: for each
// resource, what it borrows above its quota (summed over flavors) per thousand of what
// its cohort could lend, the largest of these, divided by the fairSharing weight. 0 when
// it borrows nothing; math.MaxInt64 when it borrows with weight 0.
func (q *Quota) Share(cq string) int64 {
	n, ok := q.s.cqID(cq)
	if !ok {
		return 0
	}
	return q.share(n, nil)
}
