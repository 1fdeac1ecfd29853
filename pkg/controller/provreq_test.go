package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDecideProvCheck(t *testing.T) {
	retry := api.ProvisioningRetry{BackoffLimitCount: 1, BackoffBase: time.Minute, BackoffMax: 90 * time.Second}
	conds := func(types ...string) provReqConditions {
		c := provReqConditions{true: map[string]string{}}
		for _, typ := range types {
			c.true[typ] = typ + " message"
		}
		return c
	}
	tests := []struct {
		name     string
		c        provReqConditions
		attempt  int
		admitted bool
		want     api.CheckState
		wait     time.Duration
	}{
		{"open", provReqConditions{true: map[string]string{provAccepted: ""}, provisioned: "ETA 5m"}, 1, false, api.CheckPending, 0},
		{"provisioned", conds(provAccepted, provProvisioned), 1, false, api.CheckReady, 0},
		{"failed within the limit", conds(provFailed), 1, false, api.CheckRetry, time.Minute},
		{"failed past the limit", conds(provFailed), 2, false, api.CheckRejected, 0},
		{"booking expired before admission", conds(provProvisioned, provBookingExpired), 1, false, api.CheckRetry, time.Minute},
		{"booking expired once admitted", conds(provProvisioned, provBookingExpired), 1, true, api.CheckReady, 0},
		{"capacity revoked", conds(provProvisioned, provCapacityRevoked), 1, true, api.CheckRejected, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := decideProvCheck(tc.c, tc.attempt, retry, tc.admitted)
			if d.State != tc.want || d.Wait != tc.wait {
				t.Errorf("got %s after %s, want %s after %s", d.State, d.Wait, tc.want, tc.wait)
			}
		})
	}
	if d := decideProvCheck(provReqConditions{true: map[string]string{}, provisioned: "ETA 5m"}, 1, retry, false); d.Message != "ETA 5m" {
		t.Errorf("pending message %q, want the Provisioned condition's", d.Message)
	}
}

func TestProvisioningObjectsManagedPodSets(t *testing.T) {
	wl := &v1alpha1.Workload{}
	wl.Name, wl.Namespace, wl.UID = "w", "ns", "uid-1"
	wl.Spec.PodSets = []v1alpha1.PodSet{
		{Name: "cpu", Count: 1, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		{Name: "gpu", Count: 4, Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
	}
	tests := []struct {
		name     string
		managed  []resources.Name
		admitted map[string]int32
		want     map[string]int64 // template name -> count
	}{
		{"all pod sets", nil, nil, map[string]int64{"ppt-w-c-3-cpu": 1, "ppt-w-c-3-gpu": 4}},
		{"managed only, at the admitted count", []resources.Name{"nvidia.com/gpu"}, map[string]int32{"gpu": 2}, map[string]int64{"ppt-w-c-3-gpu": 2}},
		{"none managed", []resources.Name{"example.com/fpga"}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := api.ProvisioningRequestConfig{ClassName: api.ProvisioningClassCheckCapacity, ManagedResources: tc.managed}
			templates, pr, ok := provisioningObjects(wl, "c", 3, cfg, tc.admitted, nil)
			if ok != (tc.want != nil) {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			if len(templates) != len(tc.want) || pr.GetName() != "w-c-3" {
				t.Fatalf("%d templates, request %q", len(templates), pr.GetName())
			}
			sets, _, _ := unstructured.NestedSlice(pr.Object, "spec", "podSets")
			for _, s := range sets {
				m := s.(map[string]any)
				ref, _, _ := unstructured.NestedString(m, "podTemplateRef", "name")
				if n, _, _ := unstructured.NestedInt64(m, "count"); tc.want[ref] != n {
					t.Errorf("%s × %d, want × %d", ref, n, tc.want[ref])
				}
			}
		})
	}
}

func TestSetCheckState(t *testing.T) {
	var st v1alpha1.WorkloadStatus
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	setCheckState(&st, "prov", "w-prov-1", provCheckDecision{State: api.CheckPending}, t0)
	setCheckState(&st, "prov", "w-prov-1", provCheckDecision{State: api.CheckPending, Message: "ETA"}, t0.Add(time.Minute))
	if got := st.AdmissionChecks[0]; !got.LastTransitionTime.Time.Equal(t0) || got.Message != "ETA" {
		t.Errorf("same state: %+v, want the first transition time and the new message", got)
	}
	setCheckState(&st, "prov", "w-prov-1", provCheckDecision{State: api.CheckReady}, t0.Add(2*time.Minute))
	if !checksReady(st, []string{"prov"}) || checksReady(st, []string{"prov", "other"}) {
		t.Errorf("checksReady wrong for %+v", st.AdmissionChecks)
	}
}
