package controller

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/plan"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kueue's waitForPodsReady on a cluster (podsready*.go): an admitted workload carries a
// PodsReady condition, as Kueue writes it; one whose pods are not all Ready within the
// timeout of its admission (or within recoveryTimeout of losing readiness) is evicted
// with reason api.ReasonPodsReadyTimeout and requeued after Kueue's backoff, and past
// backoffLimitCount it is not tried again until it changes. With blockAdmission nothing
// is admitted while an admitted workload is not Ready. The configuration is
// Options.PodsReady, the same api.WaitForPodsReady the simulator runs.

// Condition types and reasons Kueue writes for waitForPodsReady.
const (
	// ConditionPodsReady is Kueue's PodsReady condition of an admitted workload.
	ConditionPodsReady = "PodsReady"
	// ConditionRequeued says whether an evicted workload may be tried again (Kueue's
	// Requeued): False while its backoff runs or once it is past the requeue limit.
	ConditionRequeued = "Requeued"

	ReasonPodsStarted      = "Started"         // True: all pods Ready for the first time
	ReasonPodsRecovered    = "Recovered"       // True: Ready again after losing a pod
	ReasonWaitForStart     = "WaitForStart"    // False: not yet Ready since admission
	ReasonWaitForRecovery  = "WaitForRecovery" // False: was Ready, a pod is not any more
	ReasonBackoffRunning   = "BackoffRunning"  // Requeued False: waiting out the backoff
	ReasonRequeueLimit     = string(plan.ReasonRequeuingLimitExceeded)
	ReasonWaitingPodsReady = "WaitingForPodsReady" // pending: blockAdmission holds it

	msgPodsReady    = "All pods reached readiness and the workload is running"
	msgPodsNotReady = "Not all pods are ready or succeeded"
	msgPodsLost     = "At least one pod is not ready any more, waiting for recovery"
	msgHeld         = "waiting for all admitted workloads to be in PodsReady condition"
)

// AnnotationPodsReadyTimeouts counts a workload's evictions by PodsReadyTimeout: its
// backoff doubles with each (Kueue keeps the count in requeueState.count, which Gantry
// also increments for every other eviction).
const AnnotationPodsReadyTimeouts = "gantry.dev/pods-ready-timeouts"

// podsReady reports whether every pod the admission placed is Ready (PodReady
// condition True) or has Succeeded, as Kueue counts a job's ready pods. Pods are those
// of the workload found under any of its owners, each once.
func (w *world) podsReady(wl *v1alpha1.Workload) bool {
	want := podsWanted(wl)
	if want == 0 {
		return false
	}
	seen := map[string]bool{}
	ready := 0
	for _, o := range podOwnersOf(wl) {
		for _, p := range w.podsByOwner[o] {
			k := podKey(p)
			if seen[k] || p.DeletionTimestamp != nil {
				continue
			}
			seen[k] = true
			if p.Status.Phase == corev1.PodSucceeded || podIsReady(p) {
				ready++
			}
		}
	}
	return ready >= want
}

// podsWanted is how many pods the admission holds: its placements, one per pod.
func podsWanted(wl *v1alpha1.Workload) int {
	if a := wl.Status.Admission; a != nil && len(a.Placements) > 0 {
		return len(a.Placements)
	}
	n := 0
	for _, ps := range wl.Spec.PodSets {
		n += int(ps.Count)
	}
	return n
}

func podIsReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nextPodsReady is the PodsReady condition an admitted workload should carry now, by
// Kueue's transitions: True (Started, or Recovered after a recovery), False
// WaitForStart until the first time it is Ready, False WaitForRecovery once it was.
func nextPodsReady(old *metav1.Condition, ready bool) (metav1.ConditionStatus, string, string) {
	if ready {
		if old != nil && (old.Reason == ReasonWaitForRecovery || old.Reason == ReasonPodsRecovered) {
			return metav1.ConditionTrue, ReasonPodsRecovered, msgPodsReady
		}
		return metav1.ConditionTrue, ReasonPodsStarted, msgPodsReady
	}
	if old != nil && (old.Status == metav1.ConditionTrue || old.Reason == ReasonWaitForRecovery) {
		return metav1.ConditionFalse, ReasonWaitForRecovery, msgPodsLost
	}
	return metav1.ConditionFalse, ReasonWaitForStart, msgPodsNotReady
}

// readyDeadline is when an admitted workload that is not Ready gets evicted: timeout
// after its admission while it waits to start, recoveryTimeout after it lost readiness
// (none when recoveryTimeout is 0, as in Kueue). ok is false when no deadline runs.
func readyDeadline(st v1alpha1.WorkloadStatus, cfg *api.WaitForPodsReady) (time.Time, bool) {
	pr := currentPodsReady(st)
	if pr != nil && pr.Status == metav1.ConditionTrue {
		return time.Time{}, false
	}
	if pr != nil && pr.Reason == ReasonWaitForRecovery {
		if cfg.RecoveryTimeout <= 0 {
			return time.Time{}, false
		}
		return pr.LastTransitionTime.Add(cfg.RecoveryTimeout), true
	}
	adm := meta.FindStatusCondition(st.Conditions, v1alpha1.WorkloadAdmitted)
	if adm == nil || adm.Status != metav1.ConditionTrue {
		return time.Time{}, false
	}
	return adm.LastTransitionTime.Add(cfg.Timeout), true
}

// withPodsReady is st with the PodsReady condition for ready set (its transition time
// moves only when its status does).
func withPodsReady(st v1alpha1.WorkloadStatus, ready bool, now time.Time) v1alpha1.WorkloadStatus {
	out := *st.DeepCopy()
	cur := currentPodsReady(st)
	if cur == nil { // a stale condition must not lend the new one its transition time
		meta.RemoveStatusCondition(&out.Conditions, ConditionPodsReady)
	}
	status, reason, msg := nextPodsReady(cur, ready)
	setCondition(&out, ConditionPodsReady, status, reason, msg, now)
	return out
}

// currentPodsReady is the PodsReady condition of the current admission: nil when there
// is none or it was written before the workload was last admitted (an eviction by
// preemption or a failure leaves the last run's condition behind).
func currentPodsReady(st v1alpha1.WorkloadStatus) *metav1.Condition {
	pr := meta.FindStatusCondition(st.Conditions, ConditionPodsReady)
	adm := meta.FindStatusCondition(st.Conditions, v1alpha1.WorkloadAdmitted)
	if pr == nil || (adm != nil && pr.LastTransitionTime.Before(&adm.LastTransitionTime)) {
		return nil
	}
	return pr
}
