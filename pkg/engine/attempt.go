package engine

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// attempt tries to admit one pending workload and reports whether it was admitted.
// A workload whose equivalence class was already refused this cycle, by steps that do
// not depend on the workload itself, gets the same rejection at once (equivalence.go).
func (c *cycle) attempt(p Pending) bool {
	key, cacheable := c.outcomeKeyOf(p)
	if o, ok := c.outcomes[key]; cacheable && ok {
		c.reject(p, o.r.Layer, o.r.Reason, o.r.Evidence)
		c.noFit = o.noFit
		return false
	}
	c.personal, c.noFit = false, false
	before := len(c.out.Rejections)
	ok := c.decide(p)
	if cacheable && !ok && !c.personal && len(c.out.Rejections) == before+1 {
		c.outcomes[key] = classOutcome{r: c.out.Rejections[before], noFit: c.noFit}
	}
	return ok
}

// decide is one workload's way through admission and placement.
func (c *cycle) decide(p Pending) bool {
	if p.ClusterQueue == "" {
		c.reject(p, plan.LayerAdmission, plan.ReasonQueueMissing,
			&plan.Evidence{Unresolved: &plan.LocalQueueRef{Namespace: p.Workload.Namespace, Name: p.Workload.Queue}})
		return false
	}
	p, a := c.reduce(p, c.assign(p, nil)) // partial.go: fewer pods when the full count cannot be admitted
	if a.Own {
		c.personal = true // its priority and age chose the flavors, not its class
	}
	switch a.Mode {
	case admission.NoFit:
		c.noFit = true
		if held := c.holding(p); held != nil {
			c.personal = true
			c.reject(p, plan.LayerAdmission, plan.ReasonHoldsQuota, &plan.Evidence{Holding: held, Quota: keep(a)})
			return false
		}
		c.reject(p, plan.LayerAdmission, quotaReason(a.Code), quotaEvidence(a))
		return false
	case admission.Preempt:
		c.preemptForQuota(p, a)
		return false
	}
	if c.heldOut(p, a) {
		return false
	}
	if c.checksPending(p, a) { // checks.go: quota first, the placement once checks are Ready
		return c.reserveForChecks(p, a)
	}
	res, ok := c.tryPlace(p, a)
	if ok {
		return true
	}
	tried, ok := c.fallback(p, a)
	if ok {
		return true
	}
	c.cannotPlace(p, a, res, tried)
	return false
}

// fallback retries a workload whose gang did not fit the nodes of its assigned flavors
// with those flavors excluded, so the ClusterQueue's next flavor is tried (e.g. spot is
// gone: fall back to on-demand). It returns what each other flavor tried gave.
func (c *cycle) fallback(p Pending, first admission.Assignment) ([]plan.Fallback, bool) {
	excluded := assignedFlavors(first, c.in.Flavors)
	var tried []plan.Fallback
	for i := 0; i < maxFallbacks && len(excluded) > 0; i++ {
		// Admission rules out exactly these flavors (not others sharing a node label)
		// and picks the next by its own flavor order and fungibility; placement then
		// follows the new assignment's flavors.
		a := c.assign(p, excludedSet(excluded))
		if _, _, held := c.heldBy(p, a); !a.Fits() || held {
			tried = append(tried, plan.Fallback{Without: excluded, Quota: keep(a)})
			return tried, false
		}
		res, ok := c.tryPlace(p, a)
		if ok {
			return tried, true
		}
		more := assignedFlavors(a, c.in.Flavors)
		tried = append(tried, plan.Fallback{Without: excluded, Flavors: more, Place: res.Failure})
		if len(more) == 0 {
			return tried, false
		}
		excluded = append(excluded, more...)
	}
	return tried, false
}

// tryPlace places and admits the gang if it fits now and respects reservations. The
// GPUs of reservations that start before the workload would end are held on the
// overlay while it is placed, so it lands on GPUs no reservation needs (backfill on a
// reserved node). A shape that failed earlier in this cycle under the same holds is not
// tried again: within a cycle the overlay only gains pods, so it still does not fit.
func (c *cycle) tryPlace(p Pending, a admission.Assignment) (PlaceResult, bool) {
	if res, short := c.lacksGPU(p.Workload); short {
		res.NoFitNow = true
		return res, false
	}
	if res, short := c.lacksRoom(p); short {
		res.NoFitNow = true
		return res, false
	}
	holds := c.holdsFor(p)
	key := c.shapeOf(p) + flavorKey(a)
	if res, failed := c.failedUnder(key, holds); failed {
		return res, false
	}
	mark := c.ov.Mark()
	held := c.hold(holds)
	call := c.call(p.Workload, a)
	// Under held reservations a failure is explained by them; the per-node diagnosis
	// (every node checked again) is kept for failures on the cluster as it is.
	call.Quiet = len(holds) > 0
	res := c.e.placer.Place(call)
	if !res.OK {
		if call.Quiet {
			res.Failure = &plan.PlaceFailure{Code: res.Failure.Code, Holds: len(holds)}
		}
		c.ov.Undo(mark)
		res.NoFitNow = len(holds) == 0
		c.recordFailure(key, holds, res)
		return res, false
	}
	c.release(held)
	if blocked := c.allowedSince(p, mark); blocked != nil {
		c.personal = true // backfill: whether it ends before a reservation is its own
		c.ov.Undo(mark)
		return PlaceResult{Failure: blocked}, false
	}
	c.quotaVersion++ // any admission may change every later quota answer
	if err := c.in.Quota.Admit(p.Workload, a); err != nil {
		c.ov.Undo(mark)
		return PlaceResult{Failure: &plan.PlaceFailure{Code: plan.ReasonAdmitFailed, Message: err.Error()}}, false
	}
	c.admit(a, res.Bindings)
	c.admitted(a) // holds.go
	c.takeGPU(res.Bindings)
	c.started = append(c.started, c.startedView(p, res.Bindings))
	return res, true
}

// startedView is a workload admitted this cycle as a running gang, for later
// reservation walks in the same cycle (it ends at now + its known runtime).
func (c *cycle) startedView(p Pending, bs []plan.Binding) placement.Running {
	r := placement.Running{ID: p.id(), Queue: p.ClusterQueue, Priority: p.Workload.Priority,
		Created: p.Workload.Created, StartedAt: c.in.Now, ExpectedEnd: c.expectedEnd(p)}
	for _, b := range bs {
		r.Pods = append(r.Pods, cluster.PodRef{Workload: b.Workload, PodSet: b.PodSet, Index: b.Index})
		r.GPUMilli += b.Assignment.MilliGPU()
	}
	return r
}

// cannotPlace handles a workload that fits quota but not the nodes (why, then the other
// flavors tried): placement preemption notices, or a reservation, or a rejection that
// says so.
func (c *cycle) cannotPlace(p Pending, a admission.Assignment, res PlaceResult, tried []plan.Fallback) {
	id, why := p.id(), res.Failure
	if why.Code == plan.ReasonBlockedByReservation || why.Code == plan.ReasonAdmitFailed {
		layer := plan.LayerPlacement
		if why.Code == plan.ReasonAdmitFailed {
			layer = plan.LayerAdmission
		}
		c.reject(p, layer, why.Code, &plan.Evidence{Place: why, Fallbacks: tried})
		return
	}
	if c.waitingForVictims(id) {
		c.personal = true
		c.reject(p, plan.LayerPlacement, plan.ReasonWaitingForPreemption, &plan.Evidence{Place: why, Fallbacks: tried})
		return
	}
	if c.e.cfg.Preemption && c.preemptForNodes(p, a, why, tried) {
		return
	}
	noStart := false
	if c.slotLeft() {
		c.personal = true // where a reservation goes depends on the workload's runtime
		call := c.call(p.Workload, a)
		call.Ends = c.runningByEnd()
		call.Held, call.Previous = c.held, c.previous(id)
		call.NeedGPUMilli, call.FreeGPUMilli = gpuNeed(p.Workload), c.freeGPU
		key := c.shapeOf(p) + flavorKey(a)
		call.NoFitNow = res.NoFitNow || c.unfitNow[key] // the fallbacks tried since left the overlay as it was
		if r, ok := c.e.placer.Reserve(call); ok {
			c.markUnfitNow(key) // a reservation is made only for a gang that does not fit now
			c.reserve(r, id, a.ClusterQueue, why.Code)
			return
		}
		noStart = true
	}
	c.reject(p, plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot, &plan.Evidence{Place: c.diagnosed(p, a, why), Fallbacks: tried, NoStart: noStart})
}

// markUnfitNow records that the gangs of shape key do not fit the overlay now.
func (c *cycle) markUnfitNow(key string) {
	if c.unfitNow == nil {
		c.unfitNow = map[string]bool{}
	}
	c.unfitNow[key] = true
}

// preemptForNodes asks placement for running gangs to remove; on success it gives the
// notices and records the preemptor as waiting.
func (c *cycle) preemptForNodes(p Pending, a admission.Assignment, why *plan.PlaceFailure, tried []plan.Fallback) bool {
	id := p.id()
	if np, ok := c.e.placer.(nodePreempter); ok && !np.Preempts(a.ClusterQueue) {
		return false
	}
	c.personal = true // victims depend on the preemptor's priority, age and history
	call := c.call(p.Workload, a)
	call.Running = c.eligibleRunning(id)
	pr := c.e.placer.Preempt(call)
	if len(pr.Victims) == 0 {
		return false
	}
	for _, v := range pr.Victims {
		if c.unavailable(v, id) {
			return false // placement chose an ineligible gang: do not trust the set
		}
	}
	victims := sortedIDs(pr.Victims)
	c.notice(victims, id, plan.LayerPlacement, "preempted to make room on nodes for "+string(id), pr.Notices)
	c.recordPreemptions(victims, pr.Records)
	c.reject(p, plan.LayerPlacement, plan.ReasonWaitingForPreemption, &plan.Evidence{Victims: victims, Place: why, Fallbacks: tried})
	return true
}

// preemptForQuota handles Mode Preempt: admission victims free the quota; the gang must
// also fit on the nodes once they are gone, or the preemption would be pointless.
func (c *cycle) preemptForQuota(p Pending, a admission.Assignment) {
	c.personal = true
	id := p.id()
	if !c.e.cfg.Preemption {
		c.reject(p, plan.LayerAdmission, plan.ReasonWaitingForQuota, quotaEvidence(a))
		return
	}
	if c.waitingForVictims(id) {
		if c.kueueCycle() {
			c.holdWaiting(p, a)
		}
		c.reject(p, plan.LayerAdmission, plan.ReasonWaitingForPreemption, quotaEvidence(a))
		return
	}
	vr := c.in.Quota.Victims(p.Workload, a)
	if len(vr.Victims) == 0 {
		ev := quotaEvidence(a)
		ev.Search = &admission.PreemptionResult{Code: vr.Code, Message: vr.Message}
		reason := quotaReason(vr.Code)
		if held := c.holding(p); held != nil {
			c.personal = true
			reason, ev.Holding = plan.ReasonHoldsQuota, held
		}
		c.reject(p, plan.LayerAdmission, reason, ev)
		return
	}
	ids := make([]api.WorkloadID, 0, len(vr.Victims))
	for _, v := range vr.Victims {
		var why plan.VictimState
		switch {
		case c.in.PreemptedBy[id] == v.Workload:
			why = plan.VictimPreemptedThis
		case c.preemptedBefore(id, v.Workload):
			why = plan.VictimPreemptedBefore
		case c.unavailable(v.Workload, id) || c.admittedNow(v.Workload):
			why = plan.VictimLeaving
		default:
			ids = append(ids, v.Workload)
			continue
		}
		reason := plan.ReasonPreemptionWouldCycle
		if why == plan.VictimLeaving {
			reason = plan.ReasonWaitingForPreemption
		}
		c.reject(p, plan.LayerAdmission, reason, &plan.Evidence{Victim: &plan.UnusableVictim{Workload: v.Workload, Why: why}})
		return
	}
	ids = sortedIDs(ids)
	// A workload whose checks run first needs quota only: its nodes may be provisioned.
	if res, ok := c.fitsWithout(p, a, ids); !ok && !c.checksPending(p, a) {
		c.reject(p, plan.LayerPlacement, plan.ReasonQuotaFitsClusterDoesNot, &plan.Evidence{Without: ids, Place: res.Failure})
		return
	}
	if c.kueueCycle() && !c.holdPreemptor(p, a, ids) {
		c.personal = true
		c.reject(p, plan.LayerAdmission, plan.ReasonQuotaHeldInCycle, &plan.Evidence{HeldFor: slices.Clone(c.quotaHolds.byPre)})
		return
	}
	c.notice(ids, id, plan.LayerAdmission, "preempted to free quota for "+string(id), nil)
	c.recordPreemptions(ids, nil)
	c.reject(p, plan.LayerAdmission, plan.ReasonWaitingForPreemption, &plan.Evidence{Victims: ids})
}

// fitsWithout checks, without leaving a trace, whether the gang could be placed once the
// given workloads' pods are gone.
func (c *cycle) fitsWithout(p Pending, a admission.Assignment, gone []api.WorkloadID) (PlaceResult, bool) {
	mark := c.ov.Mark()
	defer c.ov.Undo(mark)
	for _, ref := range c.podsOf(gone) {
		if err := c.ov.Forget(ref); err != nil {
			return PlaceResult{Failure: &plan.PlaceFailure{Code: plan.ReasonVictimNotBound, Message: err.Error()}}, false
		}
	}
	res := c.e.placer.Place(c.call(p.Workload, a))
	return res, res.OK
}

// podsOf returns the bound pods of the given workloads: from the running list when it
// has them, else by a scan of the snapshot.
func (c *cycle) podsOf(ids []api.WorkloadID) []cluster.PodRef {
	var out []cluster.PodRef
	missing := map[api.WorkloadID]bool{}
	for _, id := range ids {
		if r, ok := c.runningOf(id); ok && len(r.Pods) > 0 {
			out = append(out, r.Pods...)
		} else {
			missing[id] = true
		}
	}
	if len(missing) == 0 {
		return out
	}
	for _, bp := range c.in.Cluster.Pods() {
		if missing[bp.Ref.Workload] {
			out = append(out, bp.Ref)
		}
	}
	return out
}

func (c *cycle) admittedNow(id api.WorkloadID) bool {
	for _, a := range c.out.Admissions {
		if a.Workload == id {
			return true
		}
	}
	return false
}

func (c *cycle) admit(a admission.Assignment, bindings []plan.Binding) {
	c.out.Admissions = append(c.out.Admissions, plan.Admission{
		Workload: a.Workload, ClusterQueue: a.ClusterQueue,
		PodSets: PodSetAssignments(a), Borrowing: a.Borrows(), Quota: a,
	})
	c.out.Bindings = append(c.out.Bindings, bindings...)
}

// PodSetAssignments are a's pod sets as a plan's admission writes them.
func PodSetAssignments(a admission.Assignment) []plan.PodSetAssignment {
	out := make([]plan.PodSetAssignment, 0, len(a.PodSets))
	for _, ps := range a.PodSets {
		pa := plan.PodSetAssignment{Name: ps.Name, Count: ps.Count, Flavors: map[resources.Name]string{}, Usage: resources.Vector{}}
		for _, r := range ps.Resources {
			pa.Flavors[r.Resource] = r.Flavor
			pa.Usage[r.Resource] = r.Amount
		}
		out = append(out, pa)
	}
	return out
}

// quotaReason is admission's code as a rejection reason: WaitingForQuota where
// admission gives none.
func quotaReason(c admission.ReasonCode) plan.Reason {
	if c == admission.ReasonNone {
		return plan.ReasonWaitingForQuota
	}
	return plan.AdmissionReason(c)
}

// quotaEvidence is admission's assignment as a rejection's evidence.
func quotaEvidence(a admission.Assignment) *plan.Evidence {
	return &plan.Evidence{Quota: keep(a)}
}

// keep copies an assignment for evidence; a copy, so that only the paths that keep one
// allocate it.
func keep(a admission.Assignment) *admission.Assignment { return &a }

// call builds the placement question for w under a on this cycle's overlay.
func (c *cycle) call(w *api.Workload, a admission.Assignment) PlaceCall {
	rnd := c.in.Rand
	if c.in.TieSeed != nil {
		rnd = TieBreak(*c.in.TieSeed, w)
	}
	return PlaceCall{Overlay: c.ov, Workload: w, Assignment: a, Rand: rnd, Now: c.in.Now,
		Running: c.in.Running, History: c.history, Grace: c.e.cfg.Grace}
}
