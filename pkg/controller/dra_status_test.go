package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A claim that holds an admitted gang is written on its Workload (reason and a message
// naming the claim), the admission kept; once nothing holds it the admission's own
// reason and message come back.
func TestClaimHoldStatus(t *testing.T) {
	admitted := v1alpha1.WorkloadStatus{State: v1alpha1.StateAdmitted, Reason: ReasonAdmitted, Message: "Admitted by ClusterQueue cq",
		Admission:  &v1alpha1.Admission{ClusterQueue: "cq"},
		Conditions: []metav1.Condition{{Type: v1alpha1.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: ReasonAdmitted, Message: "Admitted by ClusterQueue cq"}}}
	notCreated := fmt.Errorf("pod ns/p-0: spec.resourceClaims[0] (gpu): %w", errClaimNotCreated)
	taken := fmt.Errorf("ResourceClaim ns/p-0-gpu-x: status.allocation: %w (n2/gpu-0, the slot wants n1/gpu-0)", errClaimTaken)
	for _, tc := range []struct {
		name       string
		err        error
		wantReason string
		wantIn     []string
	}{
		{"claim not created yet", notCreated, ReasonWaitingForClaims, []string{"pod ns/p-0", "spec.resourceClaims[0] (gpu)", "not created yet"}},
		{"claim allocated to other devices", taken, ReasonClaimRefused, []string{"ResourceClaim ns/p-0-gpu-x", "allocated to other devices"}},
		{"claim spec does not compile", errors.New("pod ns/p-0: claim gpu: spec.devices.requests[0]: bad"), ReasonClaimRefused, []string{"claim gpu"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := claimHoldStatus(admitted, tc.err)
			if st.State != v1alpha1.StateAdmitted || st.Admission == nil || st.Reason != tc.wantReason {
				t.Fatalf("state %s reason %s admission %v, want Admitted, %s, kept", st.State, st.Reason, st.Admission, tc.wantReason)
			}
			for _, w := range tc.wantIn {
				if !strings.Contains(st.Message, w) {
					t.Errorf("message %q does not name %q", st.Message, w)
				}
			}
			back, ok := claimsClearedStatus(st)
			if !ok || !sameStatus(back, admitted) {
				t.Errorf("cleared: %+v (%v), want the admitted status %+v", back, ok, admitted)
			}
		})
	}
	if _, ok := claimsClearedStatus(admitted); ok {
		t.Error("a status without a claim reason was cleared")
	}
}

// A gang whose claim turns out allocated to other devices while its binds run binds
// nothing, and the refusal goes to the Workload (through refused), naming the claim.
func TestBindPipelineReportsRefusedClaim(t *testing.T) {
	rec := &recordingBinder{}
	var mu sync.Mutex
	var got []string
	bp := newTestPipeline(t, rec.client(), func() {})
	bp.refused = func(_ context.Context, wl *v1alpha1.Workload, err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, wl.Namespace+"/"+wl.Name+": "+err.Error())
	}
	wl, _, bs := gangOfTwo()
	claim := testClaim("a-gpu", bs[0].pod)
	other := allocation("n0", "gpu-7")
	claim.Status.Allocation = &other
	bs[0].claims = []claimWrite{{claim: claim, allocation: allocation("n0", "gpu-0")}}
	bp.bind(context.Background(), wl, bs, time.Unix(1000, 0))
	bp.wait()
	if len(rec.bound) != 0 {
		t.Errorf("pods bound despite a refused claim: %v", rec.bound)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], "ns/wl: ResourceClaim ns/a-gpu") || !strings.Contains(got[0], "allocated to other devices") {
		t.Errorf("refusals reported %q, want one for ns/wl naming ResourceClaim ns/a-gpu", got)
	}
}
