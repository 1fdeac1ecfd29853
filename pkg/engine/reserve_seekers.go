package engine

import (
	"container/heap"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Slot seekers. When a cycle makes reservations, the workloads the nodes refuse park
// as ParkedReserved and come back at every change (requeue.go): who is held back by a
// reservation and who gets one of the ReservationDepth slots move with the order. Most
// of them cannot be hosted by the free GPUs at all, whatever is held: visiting such a
// workload can only end in a rejection, or in a reservation while a slot is left. So
// the scheduler hands them apart (Input.SlotSeekers) and the cycle visits them at their
// place in the order only while a slot is left; once the slots are taken the rest are
// not visited, and they stay parked with their last rejection. The reservations come
// out as if every one had been visited.

// seekerFirst reports whether the next visit is the first slot seeker: a slot is left
// and it orders before the next workload of the other sources.
func (v *visits) seekerFirst(inSorted bool) bool {
	if len(v.seekers) == 0 || v.seeking == nil || !v.seeking() {
		return false
	}
	top := v.seekers[0].k
	if inSorted && v.keys[v.next].less(top) {
		return false
	}
	return len(v.later) == 0 || top.less(v.later[0].k)
}

// seek hands the visits the slot seekers, visited while seeking reports true.
func (v *visits) seek(seekers []Pending, seeking func() bool) {
	if len(seekers) == 0 {
		return
	}
	v.seekers = make(keyedHeap, len(seekers))
	for i, p := range seekers {
		v.seekers[i] = keyed{p: p, k: v.k.key(p)}
	}
	heap.Init(&v.seekers)
	v.seeking = seeking
}

// slotLeft reports whether the cycle may still make a reservation.
func (c *cycle) slotLeft() bool {
	return c.e.cfg.Reservations && len(c.out.Reservations) < c.e.cfg.reservationDepth()
}

// slotSeeker returns the test for Input.SlotSeekers over the cluster the cycle starts
// with: refused behind reservations, holding none, in a BestEffortFIFO queue (a
// StrictFIFO head left unvisited would let its followers pass), not one that may
// preempt (its visit can evict), and not hostable by the free whole GPUs.
func (s *Scheduler) slotSeeker(w World) func(*entry) bool {
	if w.Cluster == nil || !s.eng.cfg.Reservations {
		return func(*entry) bool { return false }
	}
	v := newFreeGPUView(w.Cluster)
	return func(e *entry) bool {
		return e.park == ParkedReserved && e.reserved == nil && e.strategy != api.StrictFIFO &&
			e.gpuNeeds != nil && !preempts(e.policy) && !e.nodePreempts && !v.mayFit(e.gpuNeeds)
	}
}
