package admission

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// WithResourceGroups returns a new quota tree in which ClusterQueue cq has the given
// resource groups (a QuotaChange), with every admitted workload still admitted and
// counted, even above a lowered quota: Kueue does not evict on quota changes either.
// q itself is unchanged. Errors name the ClusterQueue and field.
func (q *Quota) WithResourceGroups(cq string, groups []api.ResourceGroup) (*Quota, error) {
	objs := q.s.objs
	objs.ClusterQueues = append([]api.ClusterQueue(nil), q.s.objs.ClusterQueues...)
	found := false
	for i := range objs.ClusterQueues {
		if objs.ClusterQueues[i].Name == cq {
			objs.ClusterQueues[i].ResourceGroups = groups
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("quota change: clusterqueue %q not found", cq)
	}
	s, err := buildStructure(&objs, q.s.opts)
	if err != nil {
		return nil, fmt.Errorf("quota change: %w", err)
	}
	return q.rebuilt(s)
}

// rebuilt returns a quota over structure s with q's admitted workloads carried over.
// Usage in a flavor-resource s has no quota for is kept in the records but counts
// nowhere; usage above a lowered quota stays (running workloads are not evicted).
func (q *Quota) rebuilt(s *structure) (*Quota, error) {
	out := &Quota{s: s, usage: make([]resources.Amount, len(s.nodes)*len(s.frs)), admitted: newAdmittedSet(), seq: q.seq,
		treeVer: make([]int64, len(s.nodes))}
	for _, old := range q.AdmittedWorkloads() {
		cq, ok := s.cqID(old.ClusterQueue)
		if !ok {
			return nil, fmt.Errorf("workload %s: clusterqueue %q is gone", old.ID, old.ClusterQueue)
		}
		rec := *old
		rec.cq, rec.cells = cq, nil
		for _, u := range old.Usage {
			if f, ok := s.frIndex[u.FlavorResource]; ok {
				rec.cells = append(rec.cells, cell{f, u.Amount})
			}
		}
		out.admitted.add(&rec)
		out.apply(cq, rec.cells, 1)
	}
	return out, nil
}
