package controller

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkHold is the hold an admission check put on a pending workload, as its object
// records it (releaseForCheck): parked while the generation a check rejected is
// current, or not tried before status.requeueState.requeueAt after a Retry.
type checkHold struct {
	at  time.Time
	pol engine.RequeuePolicy
	// key tells one hold from the next (the feeder applies each once).
	key string
}

// checkHoldOf reads the hold; ok is false when no check holds the workload.
func checkHoldOf(obj *v1alpha1.Workload) (checkHold, bool) {
	if obj.Status.QuotaReservation != nil {
		return checkHold{}, false
	}
	rq := meta.FindStatusCondition(obj.Status.Conditions, ConditionRequeued)
	if rq != nil && rq.Status == metav1.ConditionFalse && rq.Reason == ReasonCheckRejected {
		if rq.ObservedGeneration != obj.Generation {
			return checkHold{}, false // changed since: tried again
		}
		// Limited with limit 0: the first failure is past it, parked.
		return checkHold{at: rq.LastTransitionTime.Time, pol: engine.RequeuePolicy{Limited: true},
			key: fmt.Sprintf("rejected/%d/%s", obj.Generation, rq.LastTransitionTime.UTC())}, true
	}
	for _, c := range obj.Status.AdmissionChecks {
		if c.State != v1alpha1.CheckState(api.CheckRetry) {
			continue
		}
		h := checkHold{at: c.LastTransitionTime.Time, key: "retry/" + c.Name + "/" + c.LastTransitionTime.UTC().String()}
		if rs := obj.Status.RequeueState; rs != nil && rs.RequeueAt != nil && rs.RequeueAt.After(h.at) {
			h.pol = engine.RequeuePolicy{BackoffBase: rs.RequeueAt.Sub(h.at)}
		}
		return h, true
	}
	return checkHold{}, false
}

// checkBackOff hands the scheduler the hold a check put on a pending workload, so a
// restart resumes it too; it reports whether a check holds it.
func checkBackOff(s *engine.Scheduler, id api.WorkloadID, obj *v1alpha1.Workload) bool {
	h, ok := checkHoldOf(obj)
	if ok {
		s.BackOffWith(id, h.at, 1, h.pol)
	}
	return ok
}

// checkHoldKey is the key of the workload's current check hold ("" none).
func checkHoldKey(obj *v1alpha1.Workload) string {
	h, _ := checkHoldOf(obj)
	return h.key
}
