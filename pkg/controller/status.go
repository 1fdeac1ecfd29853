package controller

import (
	"fmt"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The functions here compute a Workload's next status from a decision. They are pure
// (time passed in) so the committer's writes are easy to test and idempotent: applying
// the same decision twice yields the same status and no second write.

// setCondition sets one condition; LastTransitionTime changes only with the status.
func setCondition(st *v1alpha1.WorkloadStatus, typ string, status metav1.ConditionStatus, reason, msg string, now time.Time) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: msg, LastTransitionTime: metav1.NewTime(now)})
}

// admittedStatus records an admission with the gang's placements.
func admittedStatus(old v1alpha1.WorkloadStatus, a plan.Admission, bs []plan.Binding, now time.Time) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	adm := &v1alpha1.Admission{ClusterQueue: a.ClusterQueue}
	for _, ps := range a.PodSets {
		psa := v1alpha1.PodSetAssignment{Name: ps.Name, Count: ptr.To(ps.Count),
			Flavors: map[corev1.ResourceName]string{}, ResourceUsage: resourceList(ps.Usage)}
		for r, f := range ps.Flavors {
			psa.Flavors[corev1.ResourceName(r)] = f
		}
		adm.PodSetAssignments = append(adm.PodSetAssignments, psa)
	}
	for _, b := range bs {
		adm.Placements = append(adm.Placements, v1alpha1.PodPlacement{PodSet: b.PodSet, Index: int32(b.Index),
			Node: b.Node, Devices: append([]string(nil), b.Devices...)})
	}
	st.Admission = adm
	msg := fmt.Sprintf("Admitted by ClusterQueue %s", a.ClusterQueue)
	if a.Borrowing {
		msg += " (borrowing from the cohort)"
	}
	setCondition(&st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionTrue, "QuotaReserved", msg, now)
	setCondition(&st, v1alpha1.WorkloadAdmitted, metav1.ConditionTrue, ReasonAdmitted, msg, now)
	if meta.IsStatusConditionTrue(st.Conditions, v1alpha1.WorkloadEvicted) {
		setCondition(&st, v1alpha1.WorkloadEvicted, metav1.ConditionFalse, "Readmitted", msg, now)
	}
	st.State, st.Reason, st.Message = v1alpha1.StateAdmitted, ReasonAdmitted, msg
	st.Position, st.ETA, st.ETABasis = nil, nil, ""
	setWhy(&st, "", nil, "")
	return st
}

// eta is an estimated start and what it rests on.
type eta struct {
	at    time.Time
	basis string
}

// pendingStatus records why a workload was not admitted this cycle, with the quota ETA
// when one was estimated (nil: none).
func pendingStatus(old v1alpha1.WorkloadStatus, r plan.Rejection, now time.Time, est *eta) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	msg := rejectionMessage(r)
	setCondition(&st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionFalse, string(r.Reason), msg, now)
	if st.State != v1alpha1.StateEvicted {
		st.State = v1alpha1.StatePending
	}
	st.Reason, st.Message = string(r.Reason), msg
	setWhy(&st, string(r.Layer), r.Explain(), r.Remedy())
	st.ETA, st.ETABasis = nil, ""
	if est != nil {
		st.ETA, st.ETABasis = ptr.To(metav1.NewTime(est.at)), est.basis
	}
	if r.Position > 0 {
		st.Position = ptr.To(int32(r.Position - 1))
	}
	return st
}

// reservedStatus records a backfill reservation: the workload waits for named nodes.
func reservedStatus(old v1alpha1.WorkloadStatus, r plan.Reservation, now time.Time) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	msg := fmt.Sprintf("capacity reserved on %s: %s", strings.Join(r.Nodes, ","), r.Reason)
	setCondition(&st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionFalse, ReasonReserved, msg, now)
	if st.State != v1alpha1.StateEvicted {
		st.State = v1alpha1.StatePending
	}
	st.Reason, st.Message = ReasonReserved, msg
	setWhy(&st, string(plan.LayerPlacement), []string{r.Reason, "reserved nodes: " + strings.Join(r.Nodes, ",")}, "")
	st.ETA, st.ETABasis = nil, ""
	if !r.ETA.IsZero() {
		st.ETA, st.ETABasis = ptr.To(metav1.NewTime(r.ETA)), engine.ReservationETABasis
	}
	return st
}

// evictedStatus releases the admission and requeues the workload.
func evictedStatus(old v1alpha1.WorkloadStatus, reason, msg string, now time.Time) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	st.Admission = nil
	setCondition(&st, v1alpha1.WorkloadEvicted, metav1.ConditionTrue, reason, msg, now)
	setCondition(&st, v1alpha1.WorkloadAdmitted, metav1.ConditionFalse, reason, msg, now)
	setCondition(&st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionFalse, reason, msg, now)
	st.State, st.Reason, st.Message = v1alpha1.StateEvicted, reason, msg
	setWhy(&st, "", nil, "")
	if st.RequeueState == nil {
		st.RequeueState = &v1alpha1.RequeueState{}
	}
	st.RequeueState.Count = ptr.To(ptr.Deref(st.RequeueState.Count, 0) + 1)
	return st
}

// finishedStatus marks the end of the workload; its capacity and quota are released.
func finishedStatus(old v1alpha1.WorkloadStatus, failed bool, now time.Time) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	reason, msg := ReasonSucceeded, "the job completed"
	if failed {
		reason, msg = ReasonFailed, "the job failed"
	}
	setCondition(&st, v1alpha1.WorkloadFinished, metav1.ConditionTrue, reason, msg, now)
	st.State, st.Reason, st.Message, st.Position = v1alpha1.StateFinished, reason, msg, nil
	setWhy(&st, "", nil, "")
	return st
}

// invalidStatus reports a workload Gantry cannot schedule.
func invalidStatus(old v1alpha1.WorkloadStatus, err error, now time.Time) v1alpha1.WorkloadStatus {
	st := *old.DeepCopy()
	setCondition(&st, v1alpha1.WorkloadQuotaReserved, metav1.ConditionFalse, ReasonInvalid, err.Error(), now)
	st.State, st.Reason, st.Message = v1alpha1.StatePending, ReasonInvalid, err.Error()
	setWhy(&st, "", nil, "fix the workload: "+err.Error())
	return st
}

// Bounds on the explanation a status carries: objects stay small, and the full account
// is `gantry explain`'s job.
const (
	maxDetails    = 16
	maxDetailLine = 512
)

// setWhy records the layer holding a workload, the evidence lines and the remedy; all
// empty once it is admitted, evicted or finished.
func setWhy(st *v1alpha1.WorkloadStatus, layer string, details []string, remedy string) {
	st.Layer, st.Remedy = layer, clip(remedy, maxDetailLine)
	st.Details = nil
	for i, d := range details {
		if i == maxDetails {
			st.Details = append(st.Details, fmt.Sprintf("... %d more (gantry explain)", len(details)-maxDetails))
			break
		}
		st.Details = append(st.Details, clip(d, maxDetailLine))
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

// sameStatus compares statuses ignoring condition transition times.
func sameStatus(a, b v1alpha1.WorkloadStatus) bool {
	strip := func(s v1alpha1.WorkloadStatus) v1alpha1.WorkloadStatus {
		s = *s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.Time{}
			s.Conditions[i].ObservedGeneration = 0
		}
		return s
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

func rejectionMessage(r plan.Rejection) string {
	msg := fmt.Sprintf("%s (%s layer)", r.Reason, r.Layer)
	if why := r.Explain(); len(why) > 0 {
		msg += ": " + strings.Join(why, "; ")
	}
	return clip(msg, 1024)
}

// resourceList converts typed amounts back into quantities for the API.
func resourceList(v resources.Vector) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range v.Names() {
		if q, err := resource.ParseQuantity(resources.Format(n, v[n])); err == nil {
			out[corev1.ResourceName(n)] = q
		}
	}
	return out
}
