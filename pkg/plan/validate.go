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
func (p *Plan) Validate() error {
	decided := make(map[api.WorkloadID]decision, len(p.Admissions)+len(p.Reservations)+len(p.Rejections))
	mark := func(id api.WorkloadID, what decision) error {
		if id == "" {
			return fmt.Errorf("plan cycle %d: %s with an empty workload ID", p.Cycle, what)
		}
		if prev, ok := decided[id]; ok {
			return fmt.Errorf("plan cycle %d: workload %s is both %s and %s", p.Cycle, id, prev, what)
		}
		decided[id] = what
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
	if err := p.validateBindings(decided); err != nil {
		return err
	}
	return p.validateRemovals(decided)
}

func (p *Plan) validateBindings(decided map[api.WorkloadID]decision) error {
	bound := make(map[api.WorkloadID]bool, len(p.Admissions))
	used := make(map[string]string, len(p.Bindings)) // node + "/" + device ID -> pod
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
			key := b.Node + "/" + d
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

func (p *Plan) validateRemovals(decided map[api.WorkloadID]decision) error {
	removed := map[api.WorkloadID]bool{}
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
