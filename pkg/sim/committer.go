package sim

import (
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// modelCommitter applies plans to the simulator's model. It re-checks every admission
// against the current quota (Quota.Admit re-checks the fit) and every binding against
// the current snapshot (Snapshot.Apply refuses a device already in use), workload by
// workload: all of a workload's pods or none.
type modelCommitter struct{ s *Simulator }

var _ plan.Committer = modelCommitter{}

func (s *Simulator) committer() plan.Committer { return modelCommitter{s: s} }

// Apply commits p; the error is only for a plan that fails validation.
func (c modelCommitter) Apply(p plan.Plan) (plan.Result, error) {
	if err := p.Validate(); err != nil {
		return plan.Result{}, err
	}
	s := c.s
	var res plan.Result
	// Admissions bind on one overlay, workload by workload, and the snapshot is built
	// once: a snapshot per workload copied every node and pod each time.
	ov, byWorkload := s.snap.Overlay(), p.BindingsByWorkload()
	for _, a := range p.Admissions {
		if s.blocksAdmission() { // waitForPodsReady.blockAdmission (podsready.go)
			s.holdForPodsReady(a)
			continue
		}
		if err := c.admit(ov, a, byWorkload[a.Workload]); err != nil {
			res.Refused = append(res.Refused, plan.Conflict{Workload: a.Workload, Reason: err.Error()})
			r := s.record(s.wls[a.Workload], EvRejected)
			r.Reason, r.Layer = "CommitConflict: "+err.Error(), string(plan.LayerPlacement)
			s.emit(r)
			s.dirty = true // state moved under the plan: try again
			continue
		}
		res.Applied = append(res.Applied, a.Workload)
	}
	if len(p.Admissions) > 0 {
		s.snap = ov.Seal()
	}
	for _, n := range p.Notices {
		if held, err := s.leaveReserved(n.Workload, n.By, n.Layer, n.Reason); held || err != nil { // provision_flow.go
			if err != nil {
				return res, err
			}
			continue
		}
		c.notice(n)
	}
	for _, e := range p.Evictions {
		if held, err := s.leaveReserved(e.Workload, "", e.Layer, e.Reason); held || err != nil {
			if err != nil {
				return res, err
			}
			continue
		}
		if st := s.wls[e.Workload]; st != nil {
			if err := s.evict(st, e.Layer, e.Reason); err != nil {
				return res, err
			}
		}
	}
	for _, r := range p.Reservations {
		c.reserve(r)
	}
	for _, r := range p.Rejections {
		if engine.IsQuotaReserved(r) { // admission checks run first (provision_flow.go)
			s.reserveForChecks(r)
			continue
		}
		c.reject(r)
	}
	return res, nil
}

// admit binds a workload's pods and reserves its quota, or refuses both.
func (c modelCommitter) admit(ov *cluster.Overlay, a plan.Admission, bs []plan.Binding) error {
	s := c.s
	st := s.wls[a.Workload]
	if st == nil || st.phase != plan.Pending {
		return fmt.Errorf("workload %s is not pending", a.Workload)
	}
	// Quota.Admit re-checks the planned assignment against the authoritative usage.
	asg := a.Quota
	mark := ov.Mark()
	if err := s.bindPods(ov, st.w, bs); err != nil { // shared claims: dra_shared.go
		return err
	}
	if err := s.quota.Admit(st.w, asg); err != nil {
		ov.Undo(mark)
		return err
	}
	st.assignment = asg
	s.touchBindings(bs)
	var milli resources.MilliGPU
	for _, b := range bs {
		milli += b.Assignment.MilliGPU()
	}
	if milli > 0 {
		st.gpuMilli = milli // exact, from the devices actually bound
	}
	return c.started(st, a, bs)
}

// started moves a committed workload to Running and logs it.
func (c modelCommitter) started(st *wlState, a plan.Admission, bs []plan.Binding) error {
	s := c.s
	if err := s.setPhase(st, plan.Admitted); err != nil {
		return err
	}
	c.logAdmitted(st, a, bs)
	return s.start(st, bs)
}

// logAdmitted writes the admitted and placed records of a committed workload.
func (c modelCommitter) logAdmitted(st *wlState, a plan.Admission, bs []plan.Binding) {
	s := c.s
	r := s.record(st, EvAdmitted)
	r.Flavor, r.Borrowing = flavorText(a), st.assignment.Borrows()
	s.emit(r)
	placed := s.record(st, EvPlaced)
	placed.Flavor = r.Flavor
	for _, b := range bs {
		placed.Pods = append(placed.Pods, PodRecord{Name: b.Pod, Node: b.Node, Devices: b.Devices})
	}
	s.emit(placed)
}

func (c modelCommitter) notice(n plan.Notice) {
	s := c.s
	st := s.wls[n.Workload]
	if st == nil || st.phase != plan.Running {
		return
	}
	s.notice(st, n.Grace, n.Layer)
	st.preemptions++
	s.sched.Noticed(n.Workload, n.By, placement.PreemptionRecord{Workload: n.Workload, Queue: st.clusterQueue, At: s.clock(), GPUMilli: st.gpuMilli})
	r := s.record(st, EvPreempted)
	r.Reason, r.Layer, r.By = n.Reason, string(n.Layer), string(n.By)
	s.emit(r)
}

func (c modelCommitter) reserve(r plan.Reservation) {
	s := c.s
	st := s.wls[r.Workload]
	if st == nil {
		return
	}
	// The scheduler keeps the newest plan (Committed); the log shows changes only.
	prev, had := s.sched.Reservation(r.Workload)
	if had && prev.ETA.Equal(r.ETA) && slices.Equal(prev.Nodes, r.Nodes) {
		return // unchanged: log reservations only when they change
	}
	rec := s.record(st, EvReserved)
	rec.Reason, rec.ETA, rec.Layer = r.Reason, etaSeconds(r.ETA), string(plan.LayerPlacement)
	for _, n := range r.Nodes {
		rec.Pods = append(rec.Pods, PodRecord{Name: "", Node: n})
	}
	s.emit(rec)
}

// reject logs a rejection whose reason changed, when anyone reads rejections.
func (c modelCommitter) reject(r plan.Rejection) {
	s := c.s
	st := s.wls[r.Workload]
	if st == nil || !s.wants(EvRejected) {
		return
	}
	prev, had := s.sched.LastRejection(r.Workload)
	if had && prev.Reason == r.Reason && prev.Layer == r.Layer {
		return // log a rejection only when its reason changes
	}
	rec := s.record(st, EvRejected)
	rec.Reason, rec.Layer = string(r.Reason), string(r.Layer)
	if why := r.Headline(); why != "" {
		rec.Reason += ": " + why
	}
	if r.Reason == plan.ReasonWaitingForPreemption {
		for _, v := range s.sched.Nominated(r.Workload) {
			rec.Victims = append(rec.Victims, string(v))
		}
	}
	s.emit(rec)
}

func podRef(b plan.Binding) cluster.PodRef {
	return cluster.PodRef{Workload: b.Workload, PodSet: b.PodSet, Index: b.Index}
}
