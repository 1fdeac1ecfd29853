package plan

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
)

// decision is what a plan decides for a workload; Validate allows one per workload.
type decision string

const (
	decAdmitted decision = "admitted"
	decReserved decision = "reserved"
	decRejected decision = "rejected"
)

// Validate checks the plan's internal consistency (not against cluster state, which is
// the committer's job): a workload is decided at most once (admitted, reserved or
// rejected), every binding belongs to an admitted workload and every admission has
// bindings, no device is bound twice within the plan, and grace periods are not negative.
func (p *Plan) Validate() error { return new(Validator).Validate(p) }

// Validator validates plans one after another, keeping its maps between them: a
// simulation validates a plan per cycle, tens of thousands, and allocating the maps each
// time was a twentieth of everything it allocated.
type Validator struct {
	decided map[api.WorkloadID]decision
	bound   map[api.WorkloadID]bool
	used    map[nodeDevice]string // a device on a node -> the pod bound to it
	removed map[api.WorkloadID]bool
	// most is the most entries a map has held since it was made: clearing walks its
	// whole table, so one much bigger than the plan at hand is made anew instead.
	most int
}

// Validate is Plan.Validate.
func (v *Validator) Validate(p *Plan) error {
	n := len(p.Admissions) + len(p.Reservations) + len(p.Rejections) + len(p.Bindings) + len(p.Notices) + len(p.Evictions)
	v.reset(n)
	mark := func(id api.WorkloadID, what decision) error {
		if id == "" {
			return fmt.Errorf("plan cycle %d: %s with an empty workload ID", p.Cycle, what)
		}
		if prev, ok := v.decided[id]; ok {
			return fmt.Errorf("plan cycle %d: workload %s is both %s and %s", p.Cycle, id, prev, what)
		}
		v.decided[id] = what
		return nil
	}
	for _, a := range p.Admissions {
		if err := mark(a.Workload, decAdmitted); err != nil {
			return err
		}
	}
	for _, r := range p.Reservations {
		if err := mark(r.Workload, decReserved); err != nil {
			return err
		}
	}
	for _, r := range p.Rejections {
		if err := mark(r.Workload, decRejected); err != nil {
			return err
		}
	}
	if err := p.validateBindings(v.decided, v.bound, v.used); err != nil {
		return err
	}
	return p.validateRemovals(v.decided, v.removed)
}

// reset empties the maps for a plan of about n entries.
func (v *Validator) reset(n int) {
	if v.decided == nil || v.most > 16*(n+1024) { // a rare huge plan (a first cycle) only
		v.decided, v.bound = make(map[api.WorkloadID]decision, n), map[api.WorkloadID]bool{}
		v.used, v.removed = map[nodeDevice]string{}, map[api.WorkloadID]bool{}
		v.most = 0
	} else {
		clear(v.decided)
		clear(v.bound)
		clear(v.used)
		clear(v.removed)
	}
	v.most = max(v.most, n)
}

// nodeDevice is a device on a node, a key built without concatenating strings.
type nodeDevice struct{ node, device string }

func (p *Plan) validateBindings(decided map[api.WorkloadID]decision, bound map[api.WorkloadID]bool, used map[nodeDevice]string) error {
	for _, b := range p.Bindings {
		if decided[b.Workload] != decAdmitted {
			return fmt.Errorf("plan cycle %d: binding of pod %s to node %s: workload %s is not admitted in this plan",
				p.Cycle, b.Pod, b.Node, b.Workload)
		}
		if b.Node == "" {
			return fmt.Errorf("plan cycle %d: binding of pod %s (workload %s): empty node", p.Cycle, b.Pod, b.Workload)
		}
		bound[b.Workload] = true
		for _, d := range b.Devices {
			if sharedDevice(d) {
				continue
			}
			key := nodeDevice{b.Node, d}
			if other, ok := used[key]; ok {
				return fmt.Errorf("plan cycle %d: device %s on node %s bound to both pod %s and pod %s",
					p.Cycle, d, b.Node, other, b.Pod)
			}
			used[key] = b.Pod
		}
	}
	for _, a := range p.Admissions {
		if !bound[a.Workload] {
			return fmt.Errorf("plan cycle %d: workload %s is admitted without bindings (admission is final only with a placement)",
				p.Cycle, a.Workload)
		}
	}
	return nil
}

func (p *Plan) validateRemovals(decided map[api.WorkloadID]decision, removed map[api.WorkloadID]bool) error {
	for _, n := range p.Notices {
		if n.Grace < 0 {
			return fmt.Errorf("plan cycle %d: notice for %s: grace period %s is negative", p.Cycle, n.Workload, n.Grace)
		}
		if removed[n.Workload] {
			return fmt.Errorf("plan cycle %d: workload %s is preempted twice", p.Cycle, n.Workload)
		}
		removed[n.Workload] = true
	}
	for _, e := range p.Evictions {
		if removed[e.Workload] {
			return fmt.Errorf("plan cycle %d: workload %s is both noticed and evicted", p.Cycle, e.Workload)
		}
		removed[e.Workload] = true
	}
	for id := range removed {
		if what, ok := decided[id]; ok {
			return fmt.Errorf("plan cycle %d: workload %s is both %s and preempted", p.Cycle, id, what)
		}
	}
	return nil
}

// sharedDevice reports whether a device ID names a fraction of a GPU ("GPU-0/share-320m"):
// several pods may hold equal fractions of one GPU under the same ID, so such IDs are not
// exclusive (the committer's device model checks that the fractions fit the GPU).
func sharedDevice(id string) bool {
	k, err := devices.KindOfID(id)
	return err == nil && k == devices.ShareDevice
}
