package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
)

// TestStatusLifecycle walks a workload through admission, eviction and readmission,
// checking the conditions and summary at each step, and that re-applying a decision
// changes nothing (so the committer writes nothing twice).
func TestStatusLifecycle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	adm := plan.Admission{Workload: "ns/w", ClusterQueue: "cq", Borrowing: true, PodSets: []plan.PodSetAssignment{{
		Name: "main", Count: 2, Flavors: map[resources.Name]string{resources.NvidiaGPU: "h100"},
		Usage: resources.Vector{resources.NvidiaGPU: 4}}}}
	bs := []plan.Binding{{Workload: "ns/w", PodSet: "main", Index: 0, Node: "n1", Devices: []string{"GPU-0", "GPU-1"}},
		{Workload: "ns/w", PodSet: "main", Index: 1, Node: "n1", Devices: []string{"GPU-2", "GPU-3"}}}

	rej := plan.Rejection{Reason: plan.ReasonWaitingForPreemption, Layer: plan.LayerPlacement, Position: 3, Evidence: &plan.Evidence{
		Victims: []api.WorkloadID{"ns/v1", "ns/v2"}, Place: &plan.PlaceFailure{Code: plan.ReasonNoNodeFits, Message: "0 of 2 nodes fit"}}}
	est := &eta{at: t0.Add(15 * time.Minute), basis: "estimated from quota"}
	pending := pendingStatus(v1alpha1.WorkloadStatus{}, rej, t0, est)
	if pending.ETA == nil || !pending.ETA.Time.Equal(est.at) || pending.ETABasis != est.basis {
		t.Errorf("pending ETA %v (%q), want %v (%q)", pending.ETA, pending.ETABasis, est.at, est.basis)
	}
	if again := pendingStatus(pending, rej, t0, nil); again.ETA != nil || again.ETABasis != "" {
		t.Errorf("an estimate no longer known stays: %v (%q)", again.ETA, again.ETABasis)
	}
	if pending.State != v1alpha1.StatePending || ptr.Deref(pending.Position, -1) != 2 || pending.Reason != string(plan.ReasonWaitingForPreemption) {
		t.Errorf("pending = %s pos %v reason %s, want Pending, 2 (0-based), WaitingForPreemption", pending.State, pending.Position, pending.Reason)
	}
	const msg = "WaitingForPreemption (placement layer): victims: ns/v1,ns/v2; placement: NoNodeFits; 0 of 2 nodes fit"
	if c := meta.FindStatusCondition(pending.Conditions, v1alpha1.WorkloadQuotaReserved); pending.Message != msg || c == nil || c.Message != msg {
		t.Errorf("pending message %q, condition %+v; want %q in both", pending.Message, c, msg)
	}
	if pending.Layer != "placement" || len(pending.Details) != 3 || pending.Details[0] != "victims: ns/v1,ns/v2" || pending.Remedy != rej.Remedy() {
		t.Errorf("pending layer %q details %q remedy %q; want placement, the 3 evidence lines, %q", pending.Layer, pending.Details, pending.Remedy, rej.Remedy())
	}
	admitted := admittedStatus(pending, adm, bs, t0.Add(time.Minute))
	if admitted.Layer != "" || admitted.Details != nil || admitted.Remedy != "" || admitted.ETA != nil || admitted.ETABasis != "" {
		t.Errorf("admitted still carries why it waited: %q %q %q", admitted.Layer, admitted.Details, admitted.Remedy)
	}
	if !meta.IsStatusConditionTrue(admitted.Conditions, v1alpha1.WorkloadAdmitted) || admitted.Position != nil ||
		len(admitted.Admission.Placements) != 2 || admitted.Admission.PodSetAssignments[0].Flavors["nvidia.com/gpu"] != "h100" {
		t.Errorf("admitted status = %+v", admitted)
	}
	if again := admittedStatus(admitted, adm, bs, t0.Add(2*time.Minute)); !sameStatus(again, admitted) {
		t.Errorf("re-applying the admission changed the status")
	}
	evicted := evictedStatus(admitted, ReasonPreempted, "for ns/other", t0.Add(time.Hour))
	if evicted.Admission != nil || !meta.IsStatusConditionTrue(evicted.Conditions, v1alpha1.WorkloadEvicted) ||
		meta.IsStatusConditionTrue(evicted.Conditions, v1alpha1.WorkloadAdmitted) || ptr.Deref(evicted.RequeueState.Count, 0) != 1 {
		t.Errorf("evicted status = %+v", evicted)
	}
	if q := queuedAt(&v1alpha1.Workload{Status: evicted}); !q.Equal(t0.Add(time.Hour)) {
		t.Errorf("requeued at %v, want the eviction time", q)
	}
	readmitted := admittedStatus(evicted, adm, bs, t0.Add(2*time.Hour))
	if meta.IsStatusConditionTrue(readmitted.Conditions, v1alpha1.WorkloadEvicted) || readmitted.State != v1alpha1.StateAdmitted {
		t.Errorf("readmitted status = %+v", readmitted)
	}
	fin := finishedStatus(readmitted, false, t0.Add(3*time.Hour))
	if fin.State != v1alpha1.StateFinished || fin.Reason != ReasonSucceeded {
		t.Errorf("finished = %s %s", fin.State, fin.Reason)
	}
}

// TestStatusExplanationBounded: a long explanation is cut to a bounded number of lines
// of bounded length, saying how many were left out, and the remedy is the rejection's.
func TestStatusExplanationBounded(t *testing.T) {
	long := make([]api.WorkloadID, 400)
	for i := range long {
		long[i] = api.WorkloadID("ns/victim-with-a-long-name")
	}
	fb := make([]plan.Fallback, 30)
	for i := range fb {
		fb[i] = plan.Fallback{Without: []string{"spot"}, Quota: &admission.Assignment{Message: "no flavor left"}}
	}
	rej := plan.Rejection{Reason: plan.ReasonQueueHeld, Layer: plan.LayerAdmission, ClusterQueue: "cq",
		Evidence: &plan.Evidence{Victims: long, Fallbacks: fb}}
	st := pendingStatus(v1alpha1.WorkloadStatus{}, rej, time.Unix(0, 0), nil)
	if len(st.Details) != maxDetails+1 || st.Details[maxDetails] != "... 15 more (gantry explain)" {
		t.Fatalf("details: %d lines, last %q; want %d and a count of the rest", len(st.Details), st.Details[len(st.Details)-1], maxDetails+1)
	}
	for _, d := range st.Details {
		if len(d) > maxDetailLine {
			t.Errorf("detail line of %d bytes, more than %d", len(d), maxDetailLine)
		}
	}
	if st.Remedy == "" || st.Remedy != rej.Remedy() || st.Layer != "admission" {
		t.Errorf("remedy %q layer %q; want %q, admission", st.Remedy, st.Layer, rej.Remedy())
	}
}
