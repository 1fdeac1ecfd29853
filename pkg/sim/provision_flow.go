package sim

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// The admission check flow of one workload: reserve, request, steps, and the outcome.

// reserveForChecks commits a quota reservation the engine made (engine.IsQuotaReserved)
// and starts the workload's checks. The engine counts the workload as admitted from
// here (its quota is taken); nothing is bound.
func (s *Simulator) reserveForChecks(r plan.Rejection) {
	st := s.wls[r.Workload]
	if st == nil || st.phase != plan.Pending {
		return
	}
	a := *r.Evidence.Quota
	if err := s.quota.Admit(st.w, a); err != nil {
		rec := s.record(st, EvRejected)
		rec.Reason, rec.Layer = "CommitConflict: "+err.Error(), string(plan.LayerAdmission)
		s.emit(rec)
		s.dirty = true
		return
	}
	pw := s.prov.wls[st.id]
	if pw == nil {
		pw = &provWorkload{attempts: map[string]int{}}
		s.prov.wls[st.id] = pw
	}
	pw.reserved, pw.asg, pw.ready, pw.checks = true, a, false, nil
	pw.run++
	s.sched.Started(st.id, s.clock())
	rec := s.record(st, EvQuotaReserved)
	rec.Flavor, rec.Borrowing = assignmentFlavors(a), a.Borrows()
	s.emit(rec)
	for i, ref := range s.prov.applicable(a) {
		cfg, _ := s.prov.configOf(ref) // checked in newProvisioner
		cr := &checkRun{check: ref, config: cfg, state: api.CheckPending}
		pw.checks = append(pw.checks, cr)
		s.request(st, pw, cr)
		s.queue.schedule(simEvent{at: cr.dueAt, kind: kProvision, wl: st.id, run: pw.run, index: i})
	}
}

// request makes a check's ProvisioningRequest and decides now how it ends (Provisioned
// or Failed) and when: the autoscaler's answer depends only on the cluster now.
func (s *Simulator) request(st *wlState, pw *provWorkload, cr *checkRun) {
	cr.dueAt = s.now
	w, a, any := managedPart(st.w, pw.asg, cr.config)
	if !any {
		cr.message = "no ProvisioningRequest needed: no pod set requests a managed resource"
		return
	}
	pw.attempts[cr.check.Name]++
	cr.request = api.ProvisioningRequestName(st.w.Name, cr.check.Name, pw.attempts[cr.check.Name])
	claims, _ := s.deviceClaims() // an error here was one at Build already
	if engine.GangFits(s.snap, w, a, s.prov.flavors, claims) {
		cr.message = "capacity is available now"
		return
	}
	if cr.config.ClassName == api.ProvisioningClassCheckCapacity {
		cr.failed, cr.message = true, "the cluster's free capacity cannot hold the pods"
		return
	}
	pool, nodes, ok := s.scaleUp(w, a, claims)
	if !ok {
		cr.failed, cr.message = true, "no autoscaled NodePool can hold all the pods within its "+api.AnnotationAutoscaleMax
		return
	}
	cr.pool, cr.from, cr.nodes, cr.dueAt = pool, pool.next, nodes, s.now+pool.delay
	pool.size += nodes
	pool.next += nodes
	cr.message = fmt.Sprintf("%d node(s) of pool %s requested", nodes, pool.pool.Name)
	s.logCheck(st, cr, "provisioning: "+cr.message)
}

// provisionStep is a request's end: its nodes join and it is Provisioned, or it Failed.
func (s *Simulator) provisionStep(e simEvent) error {
	pw := s.prov.wls[e.wl]
	st := s.wls[e.wl]
	if pw == nil || st == nil || !pw.reserved || pw.run != e.run || e.index >= len(pw.checks) {
		return nil // stale: the reservation was given up
	}
	cr := pw.checks[e.index]
	if cr.failed {
		return s.checkFailed(st, pw, cr)
	}
	if cr.nodes > 0 {
		if err := s.addProvisionedNodes(cr.pool, cr.from, cr.nodes); err != nil {
			return err
		}
		cr.message = fmt.Sprintf("Provisioned: %d node(s) of pool %s added", cr.nodes, cr.pool.pool.Name)
		cr.nodes = 0 // they are in the pool now
	}
	cr.state = api.CheckReady
	s.logCheck(st, cr, "Ready: "+cr.message)
	for _, c := range pw.checks {
		if c.state != api.CheckReady {
			return nil
		}
	}
	return s.checksReady(st, pw)
}

// checksReady starts the workload on its reservation now that its checks passed; when
// the gang does not fit any more, it hands the quota back and queues at its place, to
// be placed like any other workload.
func (s *Simulator) checksReady(st *wlState, pw *provWorkload) error {
	pw.ready, pw.readyRun = true, st.run
	if started, err := s.startReserved(st, pw); started || err != nil {
		return err
	}
	if err := s.giveBackReservation(st, pw); err != nil {
		return err
	}
	s.sched.Requeued(st.id, Epoch().Add(st.queuedAt), st.remaining())
	return nil
}

// checkFailed is Kueue's Retry (quota released, backoff) within the config's limit,
// and Rejected (the workload deactivated) past it.
func (s *Simulator) checkFailed(st *wlState, pw *provWorkload, cr *checkRun) error {
	if err := s.giveBackReservation(st, pw); err != nil {
		return err
	}
	s.sched.Requeued(st.id, s.clock(), st.remaining())
	retry := cr.config.Retry
	attempt := pw.attempts[cr.check.Name]
	if attempt <= retry.BackoffLimitCount {
		cr.state = api.CheckRetry
		pol := engine.RequeuePolicy{BackoffBase: retry.BackoffBase, BackoffMax: retry.BackoffMax}
		s.logCheck(st, cr, fmt.Sprintf("Retry: failed (%s); retry %d of %d after %s", cr.message, attempt, retry.BackoffLimitCount, pol.Wait(attempt)))
		s.sched.BackOffWith(st.id, s.clock(), attempt, pol)
		return nil
	}
	cr.state, pw.rejected = api.CheckRejected, true
	s.logCheck(st, cr, fmt.Sprintf("Rejected: failed (%s) after %d retries; workload deactivated", cr.message, retry.BackoffLimitCount))
	s.sched.BackOffWith(st.id, s.clock(), 1, engine.RequeuePolicy{Limited: true})
	return nil
}

// giveBackReservation releases the quota a reservation holds and the nodes its
// requests asked for and have not got yet (a request deleted before its nodes join
// adds none).
func (s *Simulator) giveBackReservation(st *wlState, pw *provWorkload) error {
	if !pw.reserved {
		return nil
	}
	pw.reserved = false
	for _, cr := range pw.checks {
		if cr.nodes > 0 && cr.pool != nil && !cr.failed {
			cr.pool.size -= cr.nodes
			cr.nodes = 0
		}
	}
	if _, ok := s.quota.Admitted(st.id); ok {
		if err := s.quota.Release(st.id); err != nil {
			return fmt.Errorf("simulate: releasing the quota reservation of %s: %w", st.id, err)
		}
	}
	s.dirty = true
	return nil
}

// leaveReserved handles a preemption or drain of a workload that holds only a quota
// reservation: nothing runs, so it leaves at once and queues again. It reports whether
// the workload was such a one.
func (s *Simulator) leaveReserved(id api.WorkloadID, by api.WorkloadID, layer plan.Layer, why string) (bool, error) {
	if s.prov == nil {
		return false, nil
	}
	pw, st := s.prov.wls[id], s.wls[id]
	if pw == nil || st == nil || !pw.reserved {
		return false, nil
	}
	if err := s.giveBackReservation(st, pw); err != nil {
		return true, err
	}
	st.preemptions++
	r := s.record(st, EvPreempted)
	r.Reason, r.Layer, r.By = why, string(layer), string(by)
	s.emit(r)
	s.sched.Requeued(id, s.clock(), st.remaining())
	s.emit(s.record(st, EvRequeued))
	return true, nil
}

func (s *Simulator) logCheck(st *wlState, cr *checkRun, what string) {
	rec := s.record(st, EvAdmissionCheck)
	rec.Reason = "AdmissionCheck " + cr.check.Name
	if cr.request != "" {
		rec.Reason += " (ProvisioningRequest " + cr.request + ")"
	}
	rec.Reason += ": " + what
	s.emit(rec)
}

// neverFitCandidates are the rejections to check for never fitting: not quota
// reservations, nor workloads of queues with checks, whose nodes may be provisioned.
func (s *Simulator) neverFitCandidates(rs []plan.Rejection) []plan.Rejection {
	if s.admissionChecks() == nil {
		return rs
	}
	out := make([]plan.Rejection, 0, len(rs))
	for _, r := range rs {
		if !engine.IsQuotaReserved(r) && len(s.prov.checks.ByClusterQueue[r.ClusterQueue]) == 0 {
			out = append(out, r)
		}
	}
	return out
}
