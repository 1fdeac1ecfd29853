package engine

import "github.com/gantry-sched/gantry/pkg/api"

// parkedIndex holds the parked pending workloads indexed the ways wakes look for them,
// so a wake touches only the workloads it can help, not every workload known: by kind
// (nodes freed, reservations moved, queue objects changed), by ClusterQueue (StrictFIFO
// queues wake whole) and by cohort tree (quota freed, new preemption victims).
type parkedIndex struct {
	byKind map[Park]map[api.WorkloadID]*entry
	byCQ   map[string]map[api.WorkloadID]*entry
	byRoot map[string]map[api.WorkloadID]*entry
	// quotaByRoot are the ParkedQuota ones by cohort tree and class: a quota wake asks
	// admission once per class and touches the members of the classes that may fit only.
	quotaByRoot map[string]map[string]map[api.WorkloadID]*entry
}

func newParkedIndex() parkedIndex {
	return parkedIndex{byKind: map[Park]map[api.WorkloadID]*entry{}, byCQ: map[string]map[api.WorkloadID]*entry{},
		byRoot: map[string]map[api.WorkloadID]*entry{}, quotaByRoot: map[string]map[string]map[api.WorkloadID]*entry{}}
}

// setPark moves e to park kind k (NotParked removes it from the index).
func (s *Scheduler) setPark(e *entry, k Park) {
	if e.park == k {
		return
	}
	id, cq := e.id, e.res.ClusterQueue
	if e.park != NotParked && e.park != ParkedReserved {
		delete(s.parked.byKind[e.park], id)
		delete(s.parked.byCQ[cq], id)
		delete(s.parked.byRoot[e.root], id)
		if e.park == ParkedQuota {
			s.unindexQuota(e, id)
		}
	}
	e.park = k
	if e.phase == phasePending {
		s.setPhase(e, phasePending) // joins or leaves the active set
	}
	if k == NotParked || k == ParkedReserved {
		return // active: only an unchanged cycle passes over ParkedReserved ones
	}
	add(s.parked.byKind, k, id, e)
	add(s.parked.byCQ, cq, id, e)
	add(s.parked.byRoot, e.root, id, e)
	if k == ParkedQuota {
		classes := s.parked.quotaByRoot[e.root]
		if classes == nil {
			classes = map[string]map[api.WorkloadID]*entry{}
			s.parked.quotaByRoot[e.root] = classes
		}
		add(classes, e.class, id, e)
	}
}

// unindexQuota drops e from the quota index (empty sets go, so wakes do not walk them).
func (s *Scheduler) unindexQuota(e *entry, id api.WorkloadID) {
	classes := s.parked.quotaByRoot[e.root]
	members := classes[e.class]
	delete(members, id)
	if len(members) == 0 {
		delete(classes, e.class)
	}
}

func add[K comparable](m map[K]map[api.WorkloadID]*entry, k K, id api.WorkloadID, e *entry) {
	set := m[k]
	if set == nil {
		set = map[api.WorkloadID]*entry{}
		m[k] = set
	}
	set[id] = e
}

// wakeSet wakes the entries of set that match (nil match: all).
func (s *Scheduler) wakeSet(set map[api.WorkloadID]*entry, match func(*entry) bool) {
	var woken []*entry
	for _, e := range set {
		if match == nil || match(e) {
			woken = append(woken, e)
		}
	}
	s.wakeEntries(woken)
}

// wakeEntries wakes the given entries. StrictFIFO queues wake whole: a head never runs
// without its followers behind it.
func (s *Scheduler) wakeEntries(woken []*entry) {
	var strict map[string]bool
	for _, e := range woken {
		if e.strategy == api.StrictFIFO {
			if strict == nil {
				strict = map[string]bool{}
			}
			strict[e.res.ClusterQueue] = true
		}
		s.setPark(e, NotParked)
	}
	for cq := range strict {
		s.wakeQueue(cq)
	}
}

// wakeQueue wakes every parked workload of ClusterQueue cq.
func (s *Scheduler) wakeQueue(cq string) {
	set := s.parked.byCQ[cq]
	woken := make([]*entry, 0, len(set))
	for _, e := range set {
		woken = append(woken, e)
	}
	for _, e := range woken {
		s.setPark(e, NotParked)
	}
}
