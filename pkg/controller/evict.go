package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// noticeDeadline is the eviction time of a workload under notice, if any.
func noticeDeadline(wl *v1alpha1.Workload) (time.Time, bool) {
	s := wl.Annotations[AnnotationPreemptionNotice]
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, true // unreadable deadline: evict now rather than never
	}
	return t, true
}

// evictDue evicts every admitted workload whose notice deadline has passed: its Job
// is suspended (so no pod is recreated), its remaining pods go through the Eviction
// API (honouring PodDisruptionBudgets: a refused eviction is retried next cycle), and
// then its admission is released and it is requeued.
func (ctl *Controller) evictDue(ctx context.Context, w *world, now time.Time) {
	for _, wl := range ptrs(w.workloads) {
		deadline, ok := noticeDeadline(wl)
		if !ok || wl.Status.Admission == nil {
			continue
		}
		if now.Before(deadline) {
			if ctl.nextDeadline.IsZero() || deadline.Before(ctl.nextDeadline) {
				ctl.nextDeadline = deadline // wake the loop when it is due
			}
			continue
		}
		reason := wl.Annotations[AnnotationPreemptionReason]
		if err := ctl.evict(ctx, wl, w.podsOf(wl), evictionReasonOf(reason), reason, now); err != nil {
			ctl.retry = true
			ctl.log.Info("eviction not finished, retrying", "workload", wlKey(wl), "reason", err.Error())
		}
	}
}

// evictionReasonOf is the Evicted condition's reason for a notice with this reason
// annotation: a rejected admission check (a ProvisioningRequest whose capacity was
// revoked, provreq_revoke.go) writes its reason first, as Kueue's deactivation says it;
// every other notice is a preemption.
func evictionReasonOf(annotation string) string {
	if strings.HasPrefix(annotation, ReasonCheckRejected+": ") {
		return ReasonCheckRejected
	}
	return ReasonPreempted
}

// evict asks the Eviction API about every pod first (dry run, so PodDisruptionBudgets
// are honoured without touching anything), then suspends the owner, whose operator
// removes the pods (for a Job this does not count as pod failures against its
// backoffLimit, which real evictions would); pods without a suspendable owner (plain
// pod gangs) are evicted for real. Then the admission is released (Evicted=True with
// reason) and the workload requeued. A refusal leaves everything as it was. Binds of
// the gang still in flight are waited for first.
func (ctl *Controller) evict(ctx context.Context, wl *v1alpha1.Workload, pods []*corev1.Pod, reason, why string, now time.Time) error {
	// Binds run off the pass: let those of this gang land first, so none binds a pod
	// after its gang was released and its devices given to another.
	if !ctl.binds.settle(ctx, wlKey(wl)) {
		return ctx.Err()
	}
	if err := ctl.evictPods(ctx, wl, pods, true); err != nil {
		return err
	}
	suspended, err := ctl.suspendOwner(ctx, wl)
	if err != nil {
		return err
	}
	if !suspended {
		if err := ctl.evictPods(ctx, wl, pods, false); err != nil {
			return err
		}
	}
	cq := wl.Status.Admission.ClusterQueue
	st := evictedStatus(wl.Status, reason, "evicted: "+why, now)
	failures, err := failuresOf(wl)
	if err != nil {
		ctl.log.Info("failure count unreadable, counting from this failure", "error", err.Error())
	}
	if pol := ctl.opts.Engine.Requeue; reason == ReasonDeviceUnhealthy && pol.BackoffBase > 0 {
		// Shown as Kueue shows it; the scheduler computes the same time (feed.go backOff).
		st.RequeueState.RequeueAt = ptr.To(metav1.NewTime(now.Truncate(time.Second).Add(pol.Wait(failures + 1))))
	}
	if err := ctl.writeWorkloadStatus(ctx, wl, st); err != nil {
		return err
	}
	err = patchWorkload(ctx, ctl.c, wl, func(wl *v1alpha1.Workload) {
		delete(wl.Annotations, AnnotationPreemptionNotice)
		delete(wl.Annotations, AnnotationPreemptionReason)
		delete(wl.Annotations, AnnotationNominatedVictims) // it ran, so its last wait is over
		delete(wl.Annotations, AnnotationReservation)
		if reason == ReasonDeviceUnhealthy {
			if wl.Annotations == nil {
				wl.Annotations = map[string]string{}
			}
			wl.Annotations[AnnotationFailures] = strconv.Itoa(failures + 1)
		}
	})
	if err != nil {
		return fmt.Errorf("clear notice: %w", err)
	}
	ctl.events.Eventf(wl, "Warning", ReasonEvicted, "evicted and requeued: %s", why)
	ctl.metrics.evicted(cq, reason)
	return nil
}

// evictPods sends an Eviction for every live pod (dryRun: only asks). A refusal by a
// PodDisruptionBudget (429) is recorded as an EvictionBlocked event and returned.
func (ctl *Controller) evictPods(ctx context.Context, wl *v1alpha1.Workload, pods []*corev1.Pod, dryRun bool) error {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		if dryRun {
			ev.DeleteOptions = &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
		}
		err := ctl.c.SubResource("eviction").Create(ctx, p, ev)
		if err == nil || apierrors.IsNotFound(err) {
			continue
		}
		if apierrors.IsTooManyRequests(err) {
			ctl.events.Eventf(wl, "Warning", ReasonEvictionBlocked,
				"eviction of pod %s refused by a PodDisruptionBudget; retrying: %v", p.Name, err)
		}
		return fmt.Errorf("evict pod %s: %w", p.Name, err)
	}
	return nil
}

// suspendOwner suspends the job object behind a workload, whose operator then removes
// its pods and does not recreate them. It reports whether the workload has such an
// owner (false for plain pod gangs, or an owner already gone).
func (ctl *Controller) suspendOwner(ctx context.Context, wl *v1alpha1.Workload) (bool, error) {
	o := wl.Spec.Owner
	if o == nil {
		return false, nil
	}
	key := client.ObjectKey{Namespace: wl.Namespace, Name: o.Name}
	if o.Kind == "Job" {
		var job batchv1.Job
		if err := ctl.c.Get(ctx, key, &job); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return true, ctl.setSuspend(ctx, &job, true, wl)
	}
	// By apiVersion too: one kind name may be two kinds (MPIJob v1 and v2beta1).
	k, ok := jobKindOf(o.APIVersion, o.Kind)
	if !ok {
		return false, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.GVK)
	if err := ctl.direct.Get(ctx, key, u); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, ctl.setObjectSuspend(ctx, k, u, true)
}
