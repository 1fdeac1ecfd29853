package engine

import "github.com/gantry-sched/gantry/pkg/api"

// parkedIndex holds the parked pending workloads indexed the ways wakes look for them,
// so a wake touches only the workloads it can help, not every workload known: by kind
// (nodes freed, reservations moved, queue objects changed), by ClusterQueue (StrictFIFO
// queues wake whole) and by cohort tree (quota freed, new preemption victims).
type parkedIndex struct {
	byKind map[Park]*entrySet
	byCQ   map[string]*entrySet
	byRoot map[string]*entrySet
	// quotaByRoot are the followable ParkedQuota ones by cohort tree and class, each
	// class in the order the cycle visits its members: a quota wake asks admission once
	// per class and wakes its first member only (chains.go). quotaLoners are the other
	// ParkedQuota ones by cohort tree, woken one by one.
	quotaByRoot map[string]*treeClasses
	quotaLoners map[string]*entrySet
	// preemptors are the parked ones whose ClusterQueue may preempt, by cohort tree:
	// the only ones a new possible victim can wake (admittedWakes).
	preemptors map[string]*entrySet
}

func newParkedIndex() parkedIndex {
	return parkedIndex{byKind: map[Park]*entrySet{}, byCQ: map[string]*entrySet{},
		byRoot: map[string]*entrySet{}, quotaByRoot: map[string]*treeClasses{},
		quotaLoners: map[string]*entrySet{}, preemptors: map[string]*entrySet{}}
}

// setPark moves e to park kind k (NotParked removes it from the index).
func (s *Scheduler) setPark(e *entry, k Park) {
	if e.park == k {
		return
	}
	if e.park != NotParked && e.park != ParkedReserved {
		for _, sl := range []slot{slotKind, slotCQ, slotRoot, slotClass, slotPreempt} {
			leave(e, sl)
		}
	}
	e.park = k
	if e.phase == phasePending {
		s.setPhase(e, phasePending) // joins or leaves the active set
	}
	if k == NotParked || k == ParkedReserved {
		return // active: only an unchanged cycle passes over ParkedReserved ones
	}
	setOf(s.parked.byKind, k).join(e, slotKind)
	setOf(s.parked.byCQ, e.res.ClusterQueue).join(e, slotCQ)
	setOf(s.parked.byRoot, e.root).join(e, slotRoot)
	if e.cq.preempts {
		setOf(s.parked.preemptors, e.root).join(e, slotPreempt)
	}
	if k == ParkedQuota {
		s.indexQuota(e)
	}
}

// indexQuota files a ParkedQuota workload under its class, or alone when its class
// cannot be followed (followers.go): whether it can does not change while it is parked.
func (s *Scheduler) indexQuota(e *entry) {
	if !s.followable(e) {
		setOf(s.parked.quotaLoners, e.root).join(e, slotClass)
		return
	}
	classes := s.parked.quotaByRoot[e.root]
	if classes == nil {
		classes = &treeClasses{byName: map[string]*entrySet{}}
		s.parked.quotaByRoot[e.root] = classes
	}
	classes.of(e.class).join(e, slotClass)
}

// treeClasses are one cohort tree's quota classes, each a set kept once made (empty or
// not), by name and in the order they were made: a quota wake walks them all, and a
// list walks faster than a map.
type treeClasses struct {
	byName map[string]*entrySet
	list   []namedSet
}

type namedSet struct {
	class string
	set   *entrySet
}

// of is class's set, made on first use.
func (t *treeClasses) of(class string) *entrySet {
	set := t.byName[class]
	if set == nil {
		set = &entrySet{before: classBefore}
		t.byName[class] = set
		t.list = append(t.list, namedSet{class: class, set: set})
	}
	return set
}

// all lists the classes (none for a nil t).
func (t *treeClasses) all() []namedSet {
	if t == nil {
		return nil
	}
	return t.list
}

// wakeSet wakes the entries of set that match (nil match: all).
func (s *Scheduler) wakeSet(set *entrySet, match func(*entry) bool) {
	var woken []*entry
	for _, e := range set.entries() {
		if !e.park.timeBound() && (match == nil || match(e)) {
			woken = append(woken, e)
		}
	}
	s.wakeEntries(woken)
}

// timeBound reports whether only time (a requeue backoff) or a new submission (past the
// requeue limit) wakes a workload parked so: no event of the cluster may, or a
// workload evicted by failures or a pods-ready timeout would be admitted again at once
// (backoffsOver wakes the first kind when its time has come).
func (k Park) timeBound() bool { return k == ParkedBackoff || k == ParkedLimit }

// wakeEntries wakes the given entries. StrictFIFO queues wake whole: a head never runs
// without its followers behind it.
func (s *Scheduler) wakeEntries(woken []*entry) {
	var strict map[string]bool
	for _, e := range woken {
		if e.cq.strategy == api.StrictFIFO {
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
	woken := make([]*entry, 0, set.Len())
	for _, e := range set.entries() {
		if !e.park.timeBound() {
			woken = append(woken, e)
		}
	}
	for _, e := range woken {
		s.setPark(e, NotParked)
	}
}
