package controller

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRevokedCheck: only a request made for this Workload (by UID) and marked
// CapacityRevoked revokes its admission; a Provisioned request, another Workload's
// request of the same name, and a check without a request do not.
func TestRevokedCheck(t *testing.T) {
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "uid-w"},
		Status: v1alpha1.WorkloadStatus{AdmissionChecks: []v1alpha1.AdmissionCheckState{
			{Name: "plain", State: "Ready"}, {Name: "prov", State: "Ready", ProvisioningRequest: "w-prov-1"}}}}
	conds := func(typ string) provReqConditions {
		return provReqConditions{true: map[string]string{typ: "why"}}
	}
	for _, tc := range []struct {
		name  string
		entry provReqEntry
		want  bool
	}{
		{"revoked", provReqEntry{conds: conds(provCapacityRevoked), workload: "uid-w"}, true},
		{"provisioned", provReqEntry{conds: conds(provProvisioned), workload: "uid-w"}, false},
		{"another workload's request", provReqEntry{conds: conds(provCapacityRevoked), workload: "uid-other"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := &cycleState{provReqs: map[string]provReqEntry{"ns/w-prov-1": tc.entry}}
			c, msg, ok := cs.revokedCheck(wl)
			if ok != tc.want || ok && (c.Name != "prov" || msg != "why") {
				t.Errorf("revokedCheck = %q %q %v, want %v for check prov", c.Name, msg, ok, tc.want)
			}
		})
	}
}
