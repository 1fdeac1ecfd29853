package controller

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// runChecks advances the admission checks of every workload holding a reservation
// (its requests' conditions become the checks' states, Kueue's mapping in
// decideProvCheck) and deletes the requests of workloads that no longer need them:
// finished, or back to pending without a reservation (evicted, retried, rejected). A
// reservation whose checks all turned Ready is placed by the next pass: the status
// write wakes it, and the workload is pending again there (tracked.checksDone).
func (k *committer) runChecks() {
	if !k.cs.checks.Any() && len(k.cs.provReqs) == 0 {
		return
	}
	for _, id := range sortedKeys(k.cs.byID) {
		t := k.cs.byID[id]
		switch {
		case t.reservation() != nil:
			k.advanceChecks(t)
		case t.admitted() && !t.finished():
			k.revokeAdmitted(t) // provreq_revoke.go: capacity revoked after admission
		case (t.finished() || !t.admitted() && t.reservation() == nil) && k.cs.requestsFor(t.obj):
			k.removeRequests(t.obj)
		}
	}
}

// requestsFor reports whether a request made for wl is cached.
func (cs *cycleState) requestsFor(wl *v1alpha1.Workload) bool {
	for _, e := range cs.provReqs {
		if e.workload == wl.UID {
			return true
		}
	}
	return false
}

func (k *committer) removeRequests(wl *v1alpha1.Workload) {
	if err := (provReqs{c: k.c}).remove(k.ctx, wl); err != nil {
		k.events.Eventf(wl, "Warning", "ProvisioningRequestFailed", "%v", err)
	}
}

// checkOutcome is the worst state of a reservation's checks, with the check that set it.
type checkOutcome struct {
	state api.CheckState
	check string
	d     provCheckDecision
}

// worse orders the states as they decide a reservation: Rejected over Retry over
// Pending over Ready.
func worse(a, b api.CheckState) bool {
	rank := map[api.CheckState]int{api.CheckReady: 0, api.CheckPending: 1, api.CheckRetry: 2, api.CheckRejected: 3}
	return rank[a] > rank[b]
}

// advanceChecks reads each check's request and writes the states; Retry and Rejected
// end the reservation (releaseForCheck).
func (k *committer) advanceChecks(t *tracked) {
	res := t.reservation()
	st := *t.obj.Status.DeepCopy()
	var missing []provRequest
	var updates [][]PodSetUpdate
	out := checkOutcome{state: api.CheckReady}
	for _, ref := range t.checks {
		cur := findCheck(st, ref.Name)
		if cur != nil && cur.State == v1alpha1.CheckState(api.CheckReady) && cur.ProvisioningRequest == "" {
			continue // Ready without a request: nothing to watch
		}
		// A Ready request is read again: its booking may expire before the workload is
		// placed (Retry), or its capacity be revoked (Rejected).
		req, d := k.cs.startCheck(t.obj, res, ref, cur)
		if req != nil {
			if e, found := k.cs.provReqs[t.obj.Namespace+"/"+req.pr.GetName()]; found {
				cfg, _ := checkConfig(k.cs.checks, ref) // there: startCheck made a request
				d = decideProvCheck(e.conds, attemptOf(cur), cfg.Retry, false)
				if d.State == api.CheckReady { // podsetupdates.go
					u, skipped := podSetUpdatesFor(t.obj, req.pr.GetName(), e, cfg)
					updates = append(updates, u)
					d.Message += missingDetailsNote(skipped)
				}
			} else {
				missing = append(missing, *req)
			}
		}
		setCheckState(&st, ref.Name, requestName(req), d, k.now)
		if worse(d.State, out.state) {
			out = checkOutcome{state: d.State, check: ref.Name, d: d}
		}
	}
	if out.state == api.CheckRetry || out.state == api.CheckRejected {
		k.releaseForCheck(t, st, out)
		return
	}
	// The updates go on the Workload before its checks read Ready: a workload is
	// placed only after that, and must be placed with them.
	if out.state == api.CheckReady && k.recordUpdates(t.obj, mergeUpdates(updates...)) != nil {
		return
	}
	if !sameStatus(t.obj.Status, st) && k.writeStatus(t.obj, st) != nil {
		return
	}
	k.ensureRequests(t.obj, missing)
}

// releaseForCheck ends a reservation on a check's Retry (the quota is released and
// the workload requeued after the config's backoff, until status.requeueState.
// requeueAt) or Rejected (deactivated: Requeued False for this generation of the
// Workload, as a workload past its requeue limit), and deletes its requests.
func (k *committer) releaseForCheck(t *tracked, st v1alpha1.WorkloadStatus, out checkOutcome) {
	if k.recordUpdates(t.obj, nil) != nil {
		return
	}
	st.QuotaReservation = nil
	var msg string
	if out.state == api.CheckRetry {
		at := stamp(k.now).Add(out.d.Wait)
		msg = fmt.Sprintf("admission check %s: %s; requeued at %s", out.check, out.d.Message, at.UTC().Format(time.RFC3339))
		if st.RequeueState == nil {
			st.RequeueState = &v1alpha1.RequeueState{}
		}
		st.RequeueState.RequeueAt = ptr.To(metav1.NewTime(at))
		setCondition(&st, ConditionRequeued, metav1.ConditionFalse, ReasonBackoffRunning, msg, k.now)
		setCondition(&st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionFalse, ReasonCheckRetry, msg, k.now)
		st.Reason = ReasonCheckRetry
	} else {
		msg = fmt.Sprintf("admission check %s rejected the workload: %s; deactivated until its spec changes", out.check, out.d.Message)
		setRejected(&st, t.obj.Generation, msg, k.now)
		st.Reason = ReasonCheckRejected
	}
	st.State, st.Message = v1alpha1.StatePending, msg
	if err := k.writeStatus(t.obj, st); err != nil {
		return
	}
	if k.released == nil {
		k.released = map[api.WorkloadID]bool{}
	}
	k.released[api.WorkloadID(wlKey(t.obj))] = true
	k.events.Eventf(t.obj, "Warning", st.Reason, "%s", msg)
	k.removeRequests(t.obj)
}

// setRejected records the deactivation by a Rejected check for this generation.
func setRejected(st *v1alpha1.WorkloadStatus, generation int64, msg string, now time.Time) {
	setCondition(st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionFalse, ReasonCheckRejected, msg, now)
	setDeactivated(st, generation, msg, now) // provreq_revoke.go
}

// recordUpdates sets wl's AnnotationPodSetUpdates to us (removed when none), unless it
// is so already; a failed write is an event, and the caller stops (the next pass
// tries again).
func (k *committer) recordUpdates(wl *v1alpha1.Workload, us []PodSetUpdate) error {
	want := encodeUpdates(us)
	if wl.Annotations[AnnotationPodSetUpdates] == want {
		return nil
	}
	err := patchWorkload(k.ctx, k.c, wl, func(wl *v1alpha1.Workload) {
		if want == "" {
			delete(wl.Annotations, AnnotationPodSetUpdates)
			return
		}
		if wl.Annotations == nil {
			wl.Annotations = map[string]string{}
		}
		wl.Annotations[AnnotationPodSetUpdates] = want
	})
	if err != nil {
		k.events.Eventf(wl, "Warning", "ProvisioningRequestFailed", "record the pod set updates of Workload %s/%s: %v", wl.Namespace, wl.Name, err)
	}
	return err
}
