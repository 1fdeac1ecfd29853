package engine

import (
	"container/heap"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Slot seekers. When a cycle makes reservations, the workloads the nodes refuse park
// as ParkedReserved and come back at every change (requeue.go): who is held back by a
// reservation and who gets one of the ReservationDepth slots move with the order. Most
// of them are refused again, at a cost of a visit each (at 10,000 nodes and tens of
// thousands pending, the bulk of a cycle). So the scheduler keeps them apart, by class
// (ClusterQueue, shape and priority, whose members the cycle visits in queue order),
// and hands the cycle each class's first member (Input.SlotSeekers); the cycle fetches
// the next member of a class when the one before has had its turn. While a
// reservation slot is left every member is visited at its turn. Once the slots are
// taken, a member is visited only when the free GPUs less the holds against it could
// host it (reserve_held.go), and a class is dropped whole when its member with the
// fewest holds (the shortest known runtime) could not be: the members are not even
// fetched. The admissions and reservations come out as if every one had been visited;
// those left unvisited stay parked with their last rejection.

// seekerClasses is the cycle's source of slot seekers: one item per class, ordered by
// the member whose turn is next.
type seekerClasses struct {
	c      *cycle
	heap   classHeap
	narrow func(Pending) bool
}

// classItem is a class with the member whose turn is next; checked says the class as a
// whole passed the narrowing once the slots were taken.
type classItem struct {
	class      string
	minRuntime time.Duration
	p          Pending
	k          headKey
	checked    bool
}

func (c *cycle) newSeekerClasses(classes []SeekerClass) *seekerClasses {
	if len(classes) == 0 {
		return nil
	}
	// The items and the heap are the engine's scratch, reused cycle after cycle (the
	// last cycle's items are overwritten, its heap is empty or dropped).
	items := slices.Grow(c.e.classItems[:0], len(classes))[:len(classes)]
	c.e.classItems = items
	s := &seekerClasses{c: c, heap: slices.Grow(c.e.classHeap[:0], len(classes))[:len(classes)], narrow: c.seekerNarrower()}
	c.e.classHeap = s.heap
	for i, sc := range classes {
		items[i] = classItem{class: sc.Class, minRuntime: sc.MinRuntime, p: sc.First, k: c.visits.k.key(sc.First)}
		s.heap[i] = &items[i]
	}
	heap.Init(&s.heap)
	return s
}

// take has the least class's member take its turn: it returns the member and whether
// to visit it, after moving the class on to its next member (or dropping it).
func (s *seekerClasses) take(k *keyer) (Pending, bool) {
	it := s.heap[0]
	p := it.p
	visit, keep := s.pass(it)
	if keep {
		if next, ok := s.next(it.class); ok {
			it.p, it.k = next, k.key(next)
			heap.Fix(&s.heap, 0)
			return p, visit
		}
	}
	heap.Pop(&s.heap)
	return p, visit
}

// pass says whether the member whose turn it is is visited, and whether its class is
// kept.
func (s *seekerClasses) pass(it *classItem) (visit, keep bool) {
	if s.c.slotLeft() {
		return true, true
	}
	if !it.checked {
		it.checked = true
		probe := it.p // the class's member with the fewest holds has no more than this
		if r := it.minRuntime; r > 0 && (probe.Runtime <= 0 || r < probe.Runtime) {
			probe.Runtime = r
		}
		if !s.narrow(probe) {
			return false, false
		}
		if probe.Runtime == it.p.Runtime {
			return true, true // the same question: the narrowing is a function of it
		}
	}
	return s.narrow(it.p), true
}

func (s *seekerClasses) next(class string) (Pending, bool) {
	if s.c.in.Followers == nil {
		return Pending{}, false
	}
	return s.c.in.Followers.NextSeeker(class)
}

type classHeap []*classItem

func (h classHeap) Len() int           { return len(h) }
func (h classHeap) Less(i, j int) bool { return h[i].k.less(h[j].k) }
func (h classHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *classHeap) Push(x any)        { *h = append(*h, x.(*classItem)) }
func (h *classHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// slotLeft reports whether the cycle may still make a reservation.
func (c *cycle) slotLeft() bool {
	return c.e.cfg.Reservations && len(c.out.Reservations) < c.e.cfg.reservationDepth()
}

// isSeeker reports whether e is kept as a slot seeker: refused behind reservations,
// holding none, in a BestEffortFIFO queue (a StrictFIFO head left unvisited would let
// its followers pass), not one that may preempt (its visit can evict), with whole-GPU
// pods the narrowing can count, and ordered within its class by queue time alone (no
// LocalQueue usage, no preemption in flight for it).
func (s *Scheduler) isSeeker(e *entry) bool {
	return s.eng.cfg.Reservations && e.phase == phasePending && e.park == ParkedReserved && e.reserved == nil &&
		e.cq.strategy != api.StrictFIFO && e.gpu.needs != nil && !e.cq.preempts && !e.nodePreempts &&
		s.lqUsage == nil && len(s.nominated[e.id]) == 0 && s.preemptedBy[e.id] == ""
}

// seekerSet is one class of slot seekers: its members in class order, and a lower
// bound of their known runtimes (0: none known; never raised while the class lasts).
type seekerSet struct {
	members    *entrySet
	minRuntime time.Duration
}

// joinSeekers files e with the slot seekers of its class.
func (s *Scheduler) joinSeekers(e *entry) {
	if e.slots.in[slotSeek] != nil {
		// Filed already: its class's set is not empty, so still kept (seekerClasses
		// forgets empty ones only), and its runtime cannot change while it waits there.
		return
	}
	set := s.seekers[e.class]
	if set == nil {
		set = &seekerSet{members: &entrySet{before: classBefore}}
		s.seekers[e.class] = set
	}
	set.members.join(e, slotSeek)
	if e.runtime > 0 && (set.minRuntime == 0 || e.runtime < set.minRuntime) {
		set.minRuntime = e.runtime
	}
}

// seekerClasses is Input.SlotSeekers: each class's first member (the queue layer's
// answer first: a held queue parks its members), the classes left empty forgotten.
func (s *Scheduler) seekerClasses(w World) []SeekerClass {
	s.seekIters = map[string]*seekIter{}
	if w.Unchanged {
		return nil // refused behind reservations, and nothing changed since
	}
	out := s.classBuf[:0] // the cycle copies them into its heap; reused next cycle
	for class, set := range s.seekers {
		first := s.firstUnblocked(set.members)
		if first == nil {
			delete(s.seekers, class)
			continue
		}
		s.considered++
		out = append(out, SeekerClass{Class: class, First: s.pendingOf(first), MinRuntime: set.minRuntime})
	}
	return out
}

// firstUnblocked is the first member no queue stop policy holds; the held ones park
// as ParkedQueue (a queue change wakes them).
func (s *Scheduler) firstUnblocked(set *entrySet) *entry {
	for e := set.first(); e != nil; e = set.first() {
		if _, blocked := s.queueBlock(e); !blocked {
			return e
		}
		s.setPark(e, ParkedQueue)
	}
	return nil
}

// seekIter walks a class's members in order for one cycle (a copy: visiting does not
// move them until the plan is committed).
type seekIter struct {
	list []*entry
	next int
}

// NextSeeker hands the cycle the next member of slot-seeker class class.
func (s *Scheduler) NextSeeker(class string) (Pending, bool) {
	it := s.seekIters[class]
	if it == nil {
		set := s.seekers[class]
		if set == nil {
			return Pending{}, false
		}
		list := slices.Clone(set.members.entries())
		slices.SortFunc(list, func(a, b *entry) int {
			if classBefore(a, b) {
				return -1
			}
			return 1
		})
		it = &seekIter{list: list, next: 1} // the first was handed in the input
		s.seekIters[class] = it
	}
	for it.next < len(it.list) {
		e := it.list[it.next]
		it.next++
		if e.slots.in[slotSeek] == nil {
			continue // parked for its queue meanwhile
		}
		if _, blocked := s.queueBlock(e); blocked {
			s.setPark(e, ParkedQueue)
			continue
		}
		s.considered++
		return s.pendingOf(e), true
	}
	return Pending{}, false
}

// refileSeekers files again the workloads whose reservation the plan gave or took: a
// slot seeker holds none. rejected holds the entries of p.Rejections (park's).
func (s *Scheduler) refileSeekers(p plan.Plan, rejected []*entry) {
	for _, r := range p.Reservations {
		if e := s.wls[r.Workload]; e != nil && e.phase == phasePending {
			s.setPhase(e, e.phase)
		}
	}
	for _, e := range rejected {
		if e != nil && e.phase == phasePending {
			s.setPhase(e, e.phase)
		}
	}
}
