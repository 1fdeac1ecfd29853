package controller

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/plan"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var prT0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func cond(typ string, status metav1.ConditionStatus, reason string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
}

// TestNextPodsReady: Kueue's PodsReady transitions.
func TestNextPodsReady(t *testing.T) {
	tests := []struct {
		name       string
		old        *metav1.Condition
		ready      bool
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{"no condition, not ready", nil, false, metav1.ConditionFalse, ReasonWaitForStart},
		{"no condition, ready", nil, true, metav1.ConditionTrue, ReasonPodsStarted},
		{"waiting, still not ready", ptr.To(cond(ConditionPodsReady, metav1.ConditionFalse, ReasonWaitForStart, prT0)), false, metav1.ConditionFalse, ReasonWaitForStart},
		{"started, a pod lost", ptr.To(cond(ConditionPodsReady, metav1.ConditionTrue, ReasonPodsStarted, prT0)), false, metav1.ConditionFalse, ReasonWaitForRecovery},
		{"recovering, ready again", ptr.To(cond(ConditionPodsReady, metav1.ConditionFalse, ReasonWaitForRecovery, prT0)), true, metav1.ConditionTrue, ReasonPodsRecovered},
		{"recovering, still not ready", ptr.To(cond(ConditionPodsReady, metav1.ConditionFalse, ReasonWaitForRecovery, prT0)), false, metav1.ConditionFalse, ReasonWaitForRecovery},
		{"recovered stays recovered", ptr.To(cond(ConditionPodsReady, metav1.ConditionTrue, ReasonPodsRecovered, prT0)), true, metav1.ConditionTrue, ReasonPodsRecovered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, reason, _ := nextPodsReady(tc.old, tc.ready)
			if status != tc.wantStatus || reason != tc.wantReason {
				t.Errorf("got %s/%s, want %s/%s", status, reason, tc.wantStatus, tc.wantReason)
			}
		})
	}
}

// TestReadyDeadline: timeout from the admission while waiting to start,
// recoveryTimeout from the loss of readiness, none while Ready or with recovery off;
// a PodsReady condition older than the admission belongs to an earlier run.
func TestReadyDeadline(t *testing.T) {
	cfg := api.DefaultWaitForPodsReady(5*time.Minute, false)
	cfg.RecoveryTimeout = 2 * time.Minute
	noRecovery := cfg
	noRecovery.RecoveryTimeout = 0
	admitted := cond(v1alpha1.WorkloadAdmitted, metav1.ConditionTrue, ReasonAdmitted, prT0)
	tests := []struct {
		name  string
		conds []metav1.Condition
		cfg   api.WaitForPodsReady
		want  time.Time // zero: no deadline
	}{
		{"admitted, no PodsReady yet", []metav1.Condition{admitted}, cfg, prT0.Add(5 * time.Minute)},
		{"waiting for start", []metav1.Condition{admitted, cond(ConditionPodsReady, metav1.ConditionFalse, ReasonWaitForStart, prT0.Add(time.Second))}, cfg, prT0.Add(5 * time.Minute)},
		{"ready", []metav1.Condition{admitted, cond(ConditionPodsReady, metav1.ConditionTrue, ReasonPodsStarted, prT0.Add(time.Minute))}, cfg, time.Time{}},
		{"recovering", []metav1.Condition{admitted, cond(ConditionPodsReady, metav1.ConditionFalse, ReasonWaitForRecovery, prT0.Add(time.Hour))}, cfg, prT0.Add(time.Hour + 2*time.Minute)},
		{"recovering, recoveryTimeout off", []metav1.Condition{admitted, cond(ConditionPodsReady, metav1.ConditionFalse, ReasonWaitForRecovery, prT0.Add(time.Hour))}, noRecovery, time.Time{}},
		{"Ready in an earlier run", []metav1.Condition{admitted, cond(ConditionPodsReady, metav1.ConditionTrue, ReasonPodsStarted, prT0.Add(-time.Hour))}, cfg, prT0.Add(5 * time.Minute)},
		{"not admitted", []metav1.Condition{cond(v1alpha1.WorkloadAdmitted, metav1.ConditionFalse, "Evicted", prT0)}, cfg, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := readyDeadline(v1alpha1.WorkloadStatus{Conditions: tc.conds}, &tc.cfg)
			if ok != !tc.want.IsZero() || !got.Equal(tc.want) {
				t.Errorf("deadline %s (%v), want %s", got, ok, tc.want)
			}
		})
	}
}

// TestWithPodsReadyDropsStaleCondition: a Ready condition left from an earlier run
// does not lend the new run its transition time (which would hide the new run's wait).
func TestWithPodsReadyDropsStaleCondition(t *testing.T) {
	st := v1alpha1.WorkloadStatus{Conditions: []metav1.Condition{
		cond(v1alpha1.WorkloadAdmitted, metav1.ConditionTrue, ReasonAdmitted, prT0),
		cond(ConditionPodsReady, metav1.ConditionTrue, ReasonPodsStarted, prT0.Add(-time.Hour)),
	}}
	now := prT0.Add(time.Minute)
	got := meta.FindStatusCondition(withPodsReady(st, true, now).Conditions, ConditionPodsReady)
	if got == nil || got.Reason != ReasonPodsStarted || !got.LastTransitionTime.Time.Equal(now) {
		t.Errorf("PodsReady %+v, want Started at %s", got, now)
	}
}

// TestRequeuedStatus: requeueAt by Kueue's doubling backoff, capped; past the limit
// the Requeued condition names the limit and the generation that reached it.
func TestRequeuedStatus(t *testing.T) {
	r := api.PodsReadyRequeuing{Timestamp: api.RequeueAtEviction, BackoffBase: time.Minute, BackoffMax: 3 * time.Minute, Limited: true, BackoffLimit: 3}
	tests := []struct {
		name        string
		n           int
		r           api.PodsReadyRequeuing
		wantAt      time.Duration // after now; 0: no requeueAt
		wantLimited bool
	}{
		{"first timeout", 1, r, time.Minute, false},
		{"second doubles", 2, r, 2 * time.Minute, false},
		{"third capped", 3, r, 3 * time.Minute, false},
		{"fourth past the limit", 4, r, 0, true},
		{"limit 0: the first is past it", 1, api.PodsReadyRequeuing{Timestamp: api.RequeueAtEviction, BackoffBase: time.Minute, Limited: true}, 0, true},
		{"no backoff, no limit", 5, api.PodsReadyRequeuing{Timestamp: api.RequeueAtEviction}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := v1alpha1.WorkloadStatus{Conditions: []metav1.Condition{cond(ConditionPodsReady, metav1.ConditionFalse, ReasonWaitForStart, prT0)}}
			st := requeuedStatus(old, 7, tc.n, tc.r, prT0)
			var at time.Duration
			if rs := st.RequeueState; rs != nil && rs.RequeueAt != nil {
				at = rs.RequeueAt.Sub(prT0)
			}
			rq := meta.FindStatusCondition(st.Conditions, ConditionRequeued)
			limited := rq != nil && rq.Reason == ReasonRequeueLimit && rq.ObservedGeneration == 7
			if at != tc.wantAt || limited != tc.wantLimited {
				t.Errorf("requeueAt +%s, limited %v; want +%s, %v", at, limited, tc.wantAt, tc.wantLimited)
			}
			if meta.FindStatusCondition(st.Conditions, ConditionPodsReady) != nil {
				t.Errorf("the ended run's PodsReady condition is kept")
			}
		})
	}
}

// TestPodsReadyHold: blockAdmission commits no admission while an admitted workload
// is not Ready, else only the first; the held ones' bindings go with them.
func TestPodsReadyHold(t *testing.T) {
	block := api.DefaultWaitForPodsReady(time.Minute, true)
	noBlock := api.DefaultWaitForPodsReady(time.Minute, false)
	p := plan.Plan{
		Admissions: []plan.Admission{{Workload: "ns/a"}, {Workload: "ns/b"}},
		Bindings:   []plan.Binding{{Workload: "ns/a", Pod: "a-0", Node: "n0"}, {Workload: "ns/b", Pod: "b-0", Node: "n1"}},
	}
	running := v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
		Spec:   v1alpha1.WorkloadSpec{PodSets: []v1alpha1.PodSet{{Name: "main", Count: 1}}},
		Status: v1alpha1.WorkloadStatus{Admission: &v1alpha1.Admission{Placements: []v1alpha1.PodPlacement{{PodSet: "main", Node: "n"}}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r-0", Namespace: "ns"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	readyPod := pod.DeepCopy()
	readyPod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	owner := podOwner{"ns", AnnotationWorkload, "ns/r"}
	tests := []struct {
		name     string
		cfg      *api.WaitForPodsReady
		w        *world
		wantKept string
		wantHeld string
	}{
		{"off", nil, &world{}, "[ns/a ns/b]", "[]"},
		{"no blockAdmission", &noBlock, &world{workloads: []v1alpha1.Workload{running}, podsByOwner: map[podOwner][]*corev1.Pod{owner: {pod}}}, "[ns/a ns/b]", "[]"},
		{"nothing admitted: the first only", &block, &world{}, "[ns/a]", "[ns/b]"},
		{"admitted and Ready: the first only", &block, &world{workloads: []v1alpha1.Workload{running}, podsByOwner: map[podOwner][]*corev1.Pod{owner: {readyPod}}}, "[ns/a]", "[ns/b]"},
		{"admitted, not Ready: none", &block, &world{workloads: []v1alpha1.Workload{running}, podsByOwner: map[podOwner][]*corev1.Pod{owner: {pod}}}, "[]", "[ns/a ns/b]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctl := &Controller{opts: Options{PodsReady: tc.cfg}}
			out, held := ctl.podsReadyHold(p, tc.w)
			if got := admittedIDs(out.Admissions); got != tc.wantKept {
				t.Errorf("kept %s, want %s", got, tc.wantKept)
			}
			if got := admittedIDs(held); got != tc.wantHeld {
				t.Errorf("held %s, want %s", got, tc.wantHeld)
			}
			if err := out.Validate(); err != nil {
				t.Errorf("plan to commit: %v", err)
			}
		})
	}
}

func admittedIDs(as []plan.Admission) string {
	ids := []string{}
	for _, a := range as {
		ids = append(ids, string(a.Workload))
	}
	return fmt.Sprint(ids)
}
