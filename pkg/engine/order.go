package engine

import (
	"container/heap"
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
)

// headKey is what pending workloads are ordered by: a preemptor whose victims were
// given notice first (the room they free is for it: were a victim tried first, it could
// take the room back, and the preemptor, which preempts a workload at most once, would
// wait behind it until it ends; Kueue admits a preemptor as soon as its victims' quota
// is released, to the same effect), then higher priority, then the less-served ClusterQueue
// (lower dominant share), then the less-used LocalQueue (only where admission fair
// sharing is on), then earlier queued, then earlier created, then ID so the order is
// total and deterministic.
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

// keyer makes head keys with the ClusterQueue shares as the cycle started (the cycle's
// admissions move them; a workload handed in later by Followers is ordered by the same).
type keyer struct {
	q         Quota
	nominated map[api.WorkloadID][]api.WorkloadID
	shares    map[string]int64
}

func newKeyer(q Quota, nominated map[api.WorkloadID][]api.WorkloadID, pending []Pending, more []string) *keyer {
	k := &keyer{q: q, nominated: nominated, shares: map[string]int64{}}
	for _, p := range pending {
		k.share(p.ClusterQueue)
	}
	for _, cq := range more {
		k.share(cq)
	}
	return k
}

func (k *keyer) share(cq string) int64 {
	s, ok := k.shares[cq]
	if !ok && cq != "" {
		s = k.q.Share(cq)
		k.shares[cq] = s
	}
	return s
}

func (k *keyer) key(p Pending) headKey {
	return headKey{
		preempting: len(k.nominated) > 0 && len(k.nominated[p.id()]) > 0,
		priority:   p.Workload.Priority,
		share:      k.share(p.ClusterQueue),
		lqUsage:    p.LocalQueueUsage,
		queued:     p.QueuedAt.UnixNano(),
		created:    p.Workload.Created.UnixNano(),
		id:         string(p.id()),
	}
}

// visits is the cycle's order of visits: the pending workloads sorted by head key, merged
// with the class members Followers hands in while the cycle runs (each at its own key,
// so the visits come in the order a cycle handed every one of them would take).
type visits struct {
	k       *keyer
	sorted  []Pending
	keys    []headKey
	next    int
	later   keyedHeap
	pos     map[*api.Workload]int // 1-based place within its ClusterQueue (keyed by pointer: no hashing of IDs)
	perCQ   map[string]int
	fetched map[api.WorkloadID]bool // handed in by Followers
	// seekers are Input.SlotSeekers, visited while seeking() says a reservation slot is
	// left, then narrowed once by narrow (reserve_seekers.go).
	seekers  keyedHeap
	seeking  func() bool
	narrow   func(Pending) bool
	narrowed bool
}

func newVisits(pending []Pending, k *keyer) *visits {
	keys := make([]headKey, len(pending))
	for i, p := range pending {
		keys[i] = k.key(p)
	}
	idx := make([]int, len(pending))
	for i := range idx {
		idx[i] = i
	}
	// Keys are total (the ID comes last), so any sort gives the one order.
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case keys[a].less(keys[b]):
			return -1
		}
		return 1
	})
	v := &visits{k: k, sorted: make([]Pending, len(pending)), keys: make([]headKey, len(pending)),
		pos: make(map[*api.Workload]int, len(pending)), perCQ: map[string]int{}}
	for i, j := range idx {
		v.sorted[i], v.keys[i] = pending[j], keys[j]
		v.place(pending[j])
	}
	return v
}

// place gives p the next position in its ClusterQueue.
func (v *visits) place(p Pending) {
	v.perCQ[p.ClusterQueue]++
	v.pos[p.Workload] = v.perCQ[p.ClusterQueue]
}

// add hands in a class member while the cycle runs.
func (v *visits) add(p Pending) {
	if v.fetched == nil {
		v.fetched = map[api.WorkloadID]bool{}
	}
	v.fetched[p.id()] = true
	v.place(p)
	heap.Push(&v.later, keyed{p: p, k: v.k.key(p)})
}

// pop is the next workload to visit.
func (v *visits) pop() (Pending, bool) {
	inSorted := v.next < len(v.sorted)
	if v.seekerFirst(inSorted) {
		p := heap.Pop(&v.seekers).(keyed).p
		v.place(p)
		return p, true
	}
	if len(v.later) > 0 && (!inSorted || v.later[0].k.less(v.keys[v.next])) {
		return heap.Pop(&v.later).(keyed).p, true
	}
	if !inSorted {
		return Pending{}, false
	}
	v.next++
	return v.sorted[v.next-1], true
}

type keyed struct {
	p Pending
	k headKey
}

type keyedHeap []keyed

func (h keyedHeap) Len() int           { return len(h) }
func (h keyedHeap) Less(i, j int) bool { return h[i].k.less(h[j].k) }
func (h keyedHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyedHeap) Push(x any)        { *h = append(*h, x.(keyed)) }
func (h *keyedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
