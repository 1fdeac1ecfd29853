package controller

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// checkPodsReady keeps the PodsReady condition of every admitted workload current and
// evicts those whose deadline passed (waitForPodsReady; nothing when it is off). The
// loop is woken at the next deadline, as for preemption notices.
func (ctl *Controller) checkPodsReady(ctx context.Context, w *world, now time.Time) {
	cfg := ctl.opts.PodsReady
	if cfg == nil {
		return
	}
	for _, wl := range ptrs(w.workloads) {
		if !awaitsReadiness(wl) {
			continue
		}
		ready := w.podsReady(wl)
		if err := ctl.writeWorkloadStatus(ctx, wl, withPodsReady(wl.Status, ready, now)); err != nil {
			ctl.retry = true
			ctl.log.Info("PodsReady condition not written, retrying", "workload", wlKey(wl), "error", err.Error())
			continue
		}
		deadline, ok := readyDeadline(wl.Status, cfg)
		if ready || !ok {
			continue
		}
		if now.Before(deadline) {
			if ctl.nextDeadline.IsZero() || deadline.Before(ctl.nextDeadline) {
				ctl.nextDeadline = deadline
			}
			continue
		}
		if err := ctl.evictNotReady(ctx, w, wl, cfg, now); err != nil {
			ctl.retry = true
			ctl.log.Info("PodsReadyTimeout eviction not finished, retrying", "workload", wlKey(wl), "reason", err.Error())
		}
	}
}

// awaitsReadiness: an admitted workload that is not finished and not already leaving
// under a preemption notice.
func awaitsReadiness(wl *v1alpha1.Workload) bool {
	return wl.Status.Admission != nil && wl.Annotations[AnnotationPreemptionNotice] == "" &&
		!meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished)
}

// evictNotReady evicts a workload past its PodsReady deadline as every eviction goes
// (evict: the owner suspended, the admission released) and records its requeue: the
// count of timeouts, and requeueAt by Kueue's backoff, or the requeue limit reached.
func (ctl *Controller) evictNotReady(ctx context.Context, w *world, wl *v1alpha1.Workload, cfg *api.WaitForPodsReady, now time.Time) error {
	limit := cfg.Timeout
	if pr := currentPodsReady(wl.Status); pr != nil && pr.Reason == ReasonWaitForRecovery {
		limit = cfg.RecoveryTimeout
	}
	n, err := readyTimeoutsOf(wl)
	if err != nil {
		ctl.log.Info("timeout count unreadable, counting from this timeout", "error", err.Error())
	}
	n++
	why := fmt.Sprintf("%s: pods not all Ready within %s", api.ReasonPodsReadyTimeout, limit)
	if err := ctl.evict(ctx, wl, w.podsOf(wl), api.ReasonPodsReadyTimeout, why, now); err != nil {
		return err
	}
	if err := ctl.writeWorkloadStatus(ctx, wl, requeuedStatus(wl.Status, wl.Generation, n, cfg.Requeuing, now)); err != nil {
		return err
	}
	return patchWorkload(ctx, ctl.c, wl, func(wl *v1alpha1.Workload) {
		if wl.Annotations == nil {
			wl.Annotations = map[string]string{}
		}
		wl.Annotations[AnnotationPodsReadyTimeouts] = strconv.Itoa(n)
	})
}

// requeuedStatus records the requeue after the n-th PodsReadyTimeout: requeueAt after
// Kueue's backoff (base·2^(n-1), at most max), or, past backoffLimitCount, Requeued
// False with reason RequeuingLimitExceeded for this generation of the Workload (Kueue
// deactivates it; Gantry does not try it again until its spec changes). The PodsReady
// condition of the ended run is dropped.
func requeuedStatus(old v1alpha1.WorkloadStatus, generation int64, n int, r api.PodsReadyRequeuing, now time.Time) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	meta.RemoveStatusCondition(&st.Conditions, ConditionPodsReady)
	if st.RequeueState == nil {
		st.RequeueState = &v1alpha1.RequeueState{}
	}
	st.RequeueState.RequeueAt = nil
	pol := engine.RequeuePolicy{BackoffBase: r.BackoffBase, BackoffMax: r.BackoffMax, BackoffLimit: r.BackoffLimit, Limited: r.Limited}
	if (r.Limited || r.BackoffLimit > 0) && n > r.BackoffLimit {
		msg := fmt.Sprintf("deactivated: %d PodsReadyTimeout evictions, backoffLimitCount is %d; not tried again until the Workload's spec changes", n, r.BackoffLimit)
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionRequeued, Status: metav1.ConditionFalse,
			Reason: ReasonRequeueLimit, ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now), Message: msg})
		st.Reason, st.Message = ReasonRequeueLimit, msg // what `kubectl get` shows: it stays so
		return st
	}
	if r.BackoffBase > 0 {
		at := stamp(now).Add(pol.Wait(n))
		st.RequeueState.RequeueAt = ptr.To(metav1.NewTime(at))
		setCondition(&st, ConditionRequeued, metav1.ConditionFalse, ReasonBackoffRunning,
			fmt.Sprintf("requeued at %s after %d PodsReadyTimeout evictions", at.UTC().Format(time.RFC3339), n), now)
	}
	return st
}

// readyTimeoutsOf is the workload's count of PodsReadyTimeout evictions
// (AnnotationPodsReadyTimeouts; 0 when absent), or an error naming the Workload and
// the annotation when it is not a non-negative count.
func readyTimeoutsOf(wl *v1alpha1.Workload) (int, error) {
	v, ok := wl.Annotations[AnnotationPodsReadyTimeouts]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("Workload %s/%s: annotation %s: %q is not a count of timeouts (a non-negative integer)", wl.Namespace, wl.Name, AnnotationPodsReadyTimeouts, v)
	}
	return n, nil
}

// podsReadyBackOff hands the scheduler the requeue a workload evicted by
// PodsReadyTimeout carries on its object (requeuedStatus), so a restart resumes it:
// parked past the limit while its spec is the one that reached it, else not tried
// before requeueAt. feeder.sync calls it through backOff.
func podsReadyBackOff(s *engine.Scheduler, id api.WorkloadID, obj *v1alpha1.Workload, evictedAt time.Time) {
	rq := meta.FindStatusCondition(obj.Status.Conditions, ConditionRequeued)
	if rq != nil && rq.Status == metav1.ConditionFalse && rq.Reason == ReasonRequeueLimit && rq.ObservedGeneration == obj.Generation {
		s.BackOffWith(id, evictedAt, 1, engine.RequeuePolicy{Limited: true}) // limit 0: the first failure is past it
		return
	}
	if rs := obj.Status.RequeueState; rs != nil && rs.RequeueAt != nil && rs.RequeueAt.Time.After(evictedAt) {
		s.BackOffWith(id, evictedAt, 1, engine.RequeuePolicy{BackoffBase: rs.RequeueAt.Time.Sub(evictedAt)})
	}
}
