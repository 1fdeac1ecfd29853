package engine

import (
	"strconv"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// This file is the engine's side of backfill: the reservations made in a cycle hold
// GPUs (placement's ReservationSet, per GPU), and a later workload may keep a placement
// only if it ends before each reservation it touches starts. A reservation that comes
// without a device-level plan (a placer that only names nodes) holds its whole nodes.

// reserve records a reservation made this cycle; why is the placement failure it waits
// out (the reason when the placer gave none).
func (c *cycle) reserve(r plan.Reservation, id api.WorkloadID, queue string, why plan.Reason) {
	r.Workload = id
	if r.Reason == "" {
		r.Reason = "quota fits, the cluster does not yet (" + string(why) + "); capacity reserved"
	}
	c.out.Reservations = append(c.out.Reservations, r)
	if len(r.Pods) == 0 {
		for _, n := range r.Nodes {
			if cur, ok := c.reservedNodes[n]; !ok || r.ETA.Before(cur) {
				c.reservedNodes[n] = r.ETA
			}
		}
		return
	}
	c.held = append(c.held, placement.Reservation{Workload: id, Queue: queue, Start: r.ETA, Pods: r.Pods, Waits: r.Waits})
	c.holds = append(c.holds, c.holdDevices(r.Pods))
	c.wholeHolds = append(c.wholeHolds, wholeHoldsOf(id, c.holds[len(c.holds)-1]))
}

// heldDevice is one reserved device as the pseudo pod that holds it; inWhole says a
// node's whole-GPU hold pod takes it (wholeHold).
type heldDevice struct {
	ref     cluster.PodRef
	node    int
	one     devices.Assignment
	inWhole bool
}

// holdDevices turns a reservation's pods into hold pods, one per device, named after
// it so each is held alone; made once per reservation, used by every hold after it.
func (c *cycle) holdDevices(pods []cluster.BoundPod) []heldDevice {
	n := 0
	for _, bp := range pods {
		n += len(bp.Devices.Devices)
	}
	// Two allocations per reservation, not one per device: each hold's device is its
	// own element of one array (capped, so that nothing appended spills into the next).
	out := make([]heldDevice, 0, n)
	one := make([]devices.Device, 0, n)
	for _, bp := range pods {
		node, ok := c.in.Cluster.NodeIndex(bp.Node)
		if !ok {
			continue // not in this snapshot: nothing there to hold
		}
		for _, d := range bp.Devices.Devices {
			ref := cluster.PodRef{Workload: bp.Ref.Workload, PodSet: bp.Ref.PodSet + "/hold/" + d.ID(), Index: bp.Ref.Index}
			k := len(one)
			one = append(one, d)
			out = append(out, heldDevice{ref: ref, node: node, one: devices.Assignment{Devices: one[k : k+1 : k+1]}})
		}
	}
	return out
}

// expectedEnd is when a workload placed now ends by its known runtime; zero = unknown.
func (c *cycle) expectedEnd(p Pending) time.Time {
	if p.Runtime <= 0 {
		return time.Time{}
	}
	return c.in.Now.Add(p.Runtime)
}

// holdsFor returns the indices of the held reservations p must keep off: those that
// start before p would end. Their GPUs are assumed on the overlay while p is placed, so
// placement steers p onto GPUs no reservation needs.
func (c *cycle) holdsFor(p Pending) []int {
	end, id := c.expectedEnd(p), p.id()
	var out []int
	for i := range c.held {
		if c.holdsAgainst(i, id, end) {
			out = append(out, i)
		}
	}
	return out
}

// holdMaskFor is holdsFor as a bit set, false when there are 64 holds or more.
func (c *cycle) holdMaskFor(p Pending) (uint64, bool) {
	if len(c.held) >= 64 {
		return 0, false
	}
	end, id := c.expectedEnd(p), p.id()
	var m uint64
	for i := range c.held {
		if c.holdsAgainst(i, id, end) {
			m |= 1 << uint(i)
		}
	}
	return m, true
}

// holdsAgainst reports whether held reservation i holds its GPUs against workload id
// ending at end (zero: unknown): one of another workload, starting before id ends.
func (c *cycle) holdsAgainst(i int, id api.WorkloadID, end time.Time) bool {
	r := c.held[i]
	return r.Workload != id && (end.IsZero() || end.After(r.Start))
}

// holdKey names a set of holds, for the failed-shape memo (a shape that failed under
// some holds may fit under fewer).
func holdKey(idx []int) string {
	parts := make([]string, len(idx))
	for i, v := range idx {
		parts[i] = strconv.Itoa(v)
	}
	return "|holds=" + strings.Join(parts, ",")
}

// hold assumes the reserved devices of the given reservations on the overlay, best
// effort (a GPU still in use by a running workload is busy anyway), and returns the
// refs it assumed so release can drop them. A reservation's whole GPUs that are free
// are held by one pod per node; its other devices, and a node where that pod does not
// go on, device by device. Only devices are held: reservations hold GPUs, not CPU or
// memory (as placement's Allows).
func (c *cycle) hold(idx []int) []cluster.PodRef {
	var refs []cluster.PodRef
	for _, i := range idx {
		for _, w := range c.wholeHolds[i] {
			free := c.freeWhole(w)
			switch {
			case len(free) == 0:
			case c.ov.AssumeAt(w.ref, w.node, nil, devices.Assignment{Devices: free}) == nil:
				refs = append(refs, w.ref)
			default:
				refs = c.holdEach(c.holds[i], w.node, refs)
			}
		}
		refs = c.holdEach(c.holds[i], -1, refs)
	}
	return refs
}

// holdEach assumes device by device the devices of hs that no node's whole-GPU pod
// holds, or, with node >= 0, the ones that node's pod holds (when it did not go on).
func (c *cycle) holdEach(hs []heldDevice, node int, refs []cluster.PodRef) []cluster.PodRef {
	for _, h := range hs {
		if h.inWhole != (node >= 0) || (node >= 0 && h.node != node) {
			continue
		}
		if c.ov.AssumeAt(h.ref, h.node, nil, h.one) == nil {
			refs = append(refs, h.ref)
		}
	}
	return refs
}

// wholeHold is one reservation's whole GPUs on one node, held by one pod (ref).
type wholeHold struct {
	ref  cluster.PodRef
	node int
	gpus []devices.Device
}

// wholeHoldsOf groups a reservation's whole GPUs by node, marking them in hs.
func wholeHoldsOf(id api.WorkloadID, hs []heldDevice) []wholeHold {
	// First the nodes, in order, with their whole-GPU counts; then each node's GPUs
	// carved from one array (two allocations a reservation, not one per GPU added).
	var out []wholeHold
	var counts []int
	at := map[int]int{}
	total := 0
	for k := range hs {
		h := &hs[k]
		if h.one.Devices[0].Kind != devices.WholeGPU {
			continue
		}
		j, ok := at[h.node]
		if !ok {
			j = len(out)
			at[h.node] = j
			out = append(out, wholeHold{ref: cluster.PodRef{Workload: id, PodSet: "/hold", Index: h.node}, node: h.node})
			counts = append(counts, 0)
		}
		counts[j]++
		total++
	}
	all := make([]devices.Device, total)
	from := 0
	for j := range out {
		n := counts[j]
		out[j].gpus = all[from : from : from+n]
		from += n
	}
	for k := range hs {
		h := &hs[k]
		d := h.one.Devices[0]
		if d.Kind != devices.WholeGPU {
			continue
		}
		j := at[h.node]
		out[j].gpus = append(out[j].gpus, d)
		h.inWhole = true
	}
	return out
}

// freeWhole is the GPUs of w that are free on the overlay now.
func (c *cycle) freeWhole(w wholeHold) []devices.Device {
	free := make([]devices.Device, 0, len(w.gpus))
	gf := c.ov.GPUFreeMilli(w.node)
	for _, d := range w.gpus {
		if pos, ok := c.ov.GPUPosition(w.node, d.GPU); ok && gf[pos] >= resources.MilliPerGPU {
			free = append(free, d)
		}
	}
	return free
}

// release forgets the hold pods, leaving whatever was placed meanwhile.
func (c *cycle) release(refs []cluster.PodRef) {
	for _, ref := range refs {
		_ = c.ov.Forget(ref) // assumed just above: cannot be missing
	}
}

// allows returns nil when the pods placed for p respect every reservation of the cycle:
// per GPU for device-level reservations (placement's ReservationSet.Allows), per node for
// node-only ones; else the BlockedByReservation failure saying which it breaks.
func (c *cycle) allows(p Pending, pods []cluster.BoundPod) *plan.PlaceFailure {
	end := c.expectedEnd(p)
	if ok, why := c.held.Allows(p.id(), pods, end); !ok {
		return &plan.PlaceFailure{Code: plan.ReasonBlockedByReservation, Message: why}
	}
	for _, bp := range pods {
		eta, ok := c.reservedNodes[bp.Node]
		if !ok {
			continue
		}
		if end.IsZero() || end.After(eta) {
			return &plan.PlaceFailure{Code: plan.ReasonBlockedByReservation,
				Reserved: &plan.ReservedNode{Node: bp.Node, In: eta.Sub(c.in.Now), Runtime: p.Runtime}}
		}
	}
	return nil
}

// allowedSince checks what was placed since mark against the cycle's reservations (nil:
// allowed). It reads the overlay's journal (placement.AssumedSince copies it), so it only
// does so when some reservation is in force: most cycles have none and admit thousands of
// gangs.
func (c *cycle) allowedSince(p Pending, mark cluster.Mark) *plan.PlaceFailure {
	if len(c.held) == 0 && len(c.reservedNodes) == 0 {
		return nil
	}
	return c.allows(p, placement.AssumedSince(c.ov, mark))
}

// previous is p's reservation from the last cycle as placement takes it, if any.
func (c *cycle) previous(id api.WorkloadID) *placement.Reservation {
	r, ok := c.in.Previous[id]
	if !ok || len(r.Pods) == 0 {
		return nil
	}
	return &placement.Reservation{Workload: id, Start: r.ETA, Pods: r.Pods, Waits: r.Waits}
}

// runningByEnd is the running gangs and those admitted so far this cycle, in the order
// reservation walks take them: checked, sorted and grouped once per cycle, each gang
// admitted since added at its place. Nil when the running list is invalid (no
// reservation can be planned over it).
func (c *cycle) runningByEnd() *placement.RunningByEnd {
	if c.byEnd == nil {
		byEnd, err := c.in.RunningScratch, error(nil)
		switch {
		case byEnd == nil: // a fresh one: the driver's account is not for it
			byEnd = &placement.RunningByEnd{}
			err = byEnd.Reset(c.in.Running)
		default:
			err = byEnd.ResetEdited(c.in.Running, c.in.RunningEdits)
		}
		if err != nil {
			return nil
		}
		c.byEnd = byEnd
	}
	for ; c.byEndStarted < len(c.started); c.byEndStarted++ {
		_ = c.byEnd.Add(c.started[c.byEndStarted]) // one the cycle itself admitted: unique
	}
	return c.byEnd
}
