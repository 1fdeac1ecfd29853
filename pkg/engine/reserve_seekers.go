package engine

import "github.com/gantry-sched/gantry/pkg/api"

// Slot seekers. When a cycle makes reservations, the workloads the nodes refuse park
// as ParkedReserved and come back at every change (requeue.go): who is held back by a
// reservation and who gets one of the ReservationDepth slots move with the order. Most
// of them are refused again, at a cost of a visit each (at 10,000 nodes, the bulk of a
// cycle). So the scheduler hands them apart (Input.SlotSeekers) and the cycle visits
// them at their place in the order while a slot is left; once the slots are taken,
// only those the free GPUs less the holds against them could host (reserve_held.go).
// The admissions and reservations come out as if every one had been visited; those
// left unvisited stay parked with their last rejection.

// slotSeekerPass is the slot seekers' test at their turn: a slot is left, or the
// narrowing lets them through.
func (c *cycle) slotSeekerPass() func(Pending) bool {
	narrow := c.seekerNarrower()
	return func(p Pending) bool { return c.slotLeft() || narrow(p) }
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
			e.gpu.needs != nil && !preempts(e.policy) && !e.nodePreempts
	}
}
