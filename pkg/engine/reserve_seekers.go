package engine

import (
	"container/heap"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Slot seekers. When a cycle makes reservations, the workloads the nodes refuse park
// as ParkedReserved and come back at every change (requeue.go): who is held back by a
// reservation and who gets one of the ReservationDepth slots move with the order. Most
// of them are refused again, at a cost of a visit each (at 10,000 nodes, the bulk of a
// cycle). So the scheduler hands them apart (Input.SlotSeekers) and the cycle visits
// them at their place in the order while a slot is left. Once the slots are taken it
// narrows them, once, to those the free GPUs less the holds against them could host
// (reserve_held.go), and visits only those, still in order. The admissions and
// reservations come out as if every one had been visited; those left unvisited stay
// parked with their last rejection.

// seekerFirst reports whether the next visit is the first slot seeker: it orders
// before the next workload of the other sources (narrowing the seekers first when the
// slots have just run out).
func (v *visits) seekerFirst(inSorted bool) bool {
	if len(v.seekers) > 0 && !v.narrowed && !v.seeking() {
		v.narrowSeekers()
	}
	if len(v.seekers) == 0 {
		return false
	}
	top := v.seekers[0].k
	if inSorted && v.keys[v.next].less(top) {
		return false
	}
	return len(v.later) == 0 || top.less(v.later[0].k)
}

// narrowSeekers keeps the seekers that narrow lets through (none without it).
func (v *visits) narrowSeekers() {
	v.narrowed = true
	kept := v.seekers[:0]
	for _, k := range v.seekers {
		if v.narrow != nil && v.narrow(k.p) {
			kept = append(kept, k)
		}
	}
	clear(v.seekers[len(kept):])
	v.seekers = kept
	heap.Init(&v.seekers)
}

// seek hands the visits the slot seekers: visited while seeking reports true, then
// only those narrow lets through.
func (v *visits) seek(seekers []Pending, seeking func() bool, narrow func(Pending) bool) {
	if len(seekers) == 0 {
		return
	}
	v.seekers = make(keyedHeap, len(seekers))
	for i, p := range seekers {
		v.seekers[i] = keyed{p: p, k: v.k.key(p)}
	}
	heap.Init(&v.seekers)
	v.seeking, v.narrow = seeking, narrow
}

// slotLeft reports whether the cycle may still make a reservation.
func (c *cycle) slotLeft() bool {
	return c.e.cfg.Reservations && len(c.out.Reservations) < c.e.cfg.reservationDepth()
}

// slotSeeker returns the test for Input.SlotSeekers: refused behind reservations,
// holding none, in a BestEffortFIFO queue (a StrictFIFO head left unvisited would let
// its followers pass), not one that may preempt (its visit can evict), with whole-GPU
// pods the narrowing can count.
func (s *Scheduler) slotSeeker(w World) func(*entry) bool {
	if w.Cluster == nil || !s.eng.cfg.Reservations {
		return func(*entry) bool { return false }
	}
	return func(e *entry) bool {
		return e.park == ParkedReserved && e.reserved == nil && e.strategy != api.StrictFIFO &&
			e.gpuNeeds != nil && !preempts(e.policy) && !e.nodePreempts
	}
}
