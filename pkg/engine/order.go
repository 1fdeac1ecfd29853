package engine

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// headKey is what pending workloads are ordered by: a preemptor whose victims were
// given notice first (the room they free is for it: were a victim tried first, it could
// take the room back, and the preemptor, which preempts a workload at most once, would
// wait behind it until it ends; Kueue admits a preemptor as soon as its victims' quota
// is released, to the same effect), then higher priority, then the less-served ClusterQueue (lower dominant share), then the less-used LocalQueue (only
// where admission fair sharing is on), then earlier queued, then earlier created, then
// ID so the order is total and deterministic.
type headKey struct {
	preempting bool
	priority   int32
	share      int64
	lqUsage    int64
	queued     int64
	created    int64
	id         string
}

func (a headKey) less(b headKey) bool {
	switch {
	case a.preempting != b.preempting:
		return a.preempting
	case a.priority != b.priority:
		return a.priority > b.priority
	case a.share != b.share:
		return a.share < b.share
	case a.lqUsage != b.lqUsage:
		return a.lqUsage < b.lqUsage
	case a.queued != b.queued:
		return a.queued < b.queued
	case a.created != b.created:
		return a.created < b.created
	}
	return a.id < b.id
}

// order returns the pending workloads in the order the cycle tries them, and each one's
// 1-based position within its ClusterQueue.
func order(pending []Pending, q Quota, nominated map[api.WorkloadID][]api.WorkloadID) ([]Pending, map[string]int) {
	shares := map[string]int64{}
	keys := make([]headKey, len(pending))
	for i, p := range pending {
		s, ok := shares[p.ClusterQueue]
		if !ok && p.ClusterQueue != "" {
			s = q.Share(p.ClusterQueue)
			shares[p.ClusterQueue] = s
		}
		keys[i] = headKey{
			preempting: len(nominated[p.Workload.ID()]) > 0,
			priority:   p.Workload.Priority,
			share:      s,
			lqUsage:    p.LocalQueueUsage,
			queued:     p.QueuedAt.UnixNano(),
			created:    p.Workload.Created.UnixNano(),
			id:         string(p.Workload.ID()),
		}
	}
	idx := make([]int, len(pending))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]].less(keys[idx[b]]) })
	out := make([]Pending, len(pending))
	pos := make(map[string]int, len(pending))
	perCQ := map[string]int{}
	for i, k := range idx {
		out[i] = pending[k]
		perCQ[pending[k].ClusterQueue]++
		pos[string(pending[k].Workload.ID())] = perCQ[pending[k].ClusterQueue]
	}
	return out, pos
}
